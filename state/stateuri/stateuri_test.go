package stateuri

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"clink/engine/async"
	"clink/state"
	"clink/state/mempool"
)

func TestParse(t *testing.T) {
	def := state.DefaultHotMaxBytes()
	cases := []struct {
		uri  string
		want Config
	}{
		{"memory://", Config{Scheme: Memory}},
		{"disagg-local://", Config{Scheme: DisaggLocal, IOThreads: 1, HotMaxBytes: def, Latency: async.Fixed(0)}},
		{"disagg-local://?io_threads=4&hot_max_bytes=64MiB&latency=1ms&warm_restore=true",
			Config{Scheme: DisaggLocal, IOThreads: 4, HotMaxBytes: 64 << 20, Latency: async.Fixed(time.Millisecond), WarmRestore: true}},
		{"disagg-local://?hot_max_bytes=0&latency=uniform(0.5ms,2ms)",
			Config{Scheme: DisaggLocal, IOThreads: 1, Latency: async.Uniform{Min: 500 * time.Microsecond, Max: 2 * time.Millisecond}}},
		{"disagg-local://?hot_max_bytes=1048576", Config{Scheme: DisaggLocal, IOThreads: 1, HotMaxBytes: 1 << 20, Latency: async.Fixed(0)}},
		{"remote-read://bkt/some/prefix?endpoint=http://127.0.0.1:9000&hot_max_bytes=1GiB",
			Config{Scheme: RemoteRead, Bucket: "bkt", Prefix: "some/prefix", IOThreads: 8, HotMaxBytes: 1 << 30, Latency: async.Fixed(0), Retain: 3}},
		{"remote-read://bkt/p?retain=7", Config{Scheme: RemoteRead, Bucket: "bkt", Prefix: "p", IOThreads: 8, HotMaxBytes: def, Latency: async.Fixed(0), Retain: 7}},
		{"disagg-file:///var/x?retain=5", Config{Scheme: DisaggFile, Dir: "/var/x", IOThreads: 8, HotMaxBytes: def, Latency: async.Fixed(0), Retain: 5}},
		{"disagg-file://./d?retain=all", Config{Scheme: DisaggFile, Dir: "./d", IOThreads: 8, HotMaxBytes: def, Latency: async.Fixed(0)}},
		{"disagg-file://d", Config{Scheme: DisaggFile, Dir: "d", IOThreads: 8, HotMaxBytes: def, Latency: async.Fixed(0), Retain: 3}},
	}
	for _, tc := range cases {
		t.Run(tc.uri, func(t *testing.T) {
			got, _, err := Parse(tc.uri)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct{ uri, want string }{
		{"", "want scheme://"},
		{"memory", "want scheme://"},
		{"rocksdb://", `unknown scheme "rocksdb"`},
		{"memory://?x=1", "unknown option x"},
		{"memory://host", "takes no host or path"},
		{"disagg-local://?io_threads=0", `io_threads="0": want a positive integer`},
		{"disagg-local://?io_threads=-2", "io_threads"},
		{"disagg-local://?io_threads=abc", "io_threads"},
		{"disagg-local://?hot_max_bytes=-5", "must not be negative"},
		{"disagg-local://?hot_max_bytes=lots", "hot_max_bytes"},
		{"disagg-local://?latency=fast", `latency "fast"`},
		{"disagg-local://?latency=uniform(2ms,1ms)", "min <= max"},
		{"disagg-local://?warm_restore=maybe", "warm_restore"},
		{"disagg-local://?hot_max_byte=1", "unknown option hot_max_byte (known: io_threads"},
		{"disagg-local://?io_threads=1&io_threads=2", "io_threads given 2 times"},
		{"disagg-local://?%zz", "query"},
		{"remote-read://", "needs a bucket"},
		{"remote-read://b/p?latency=1ms", "latency is for disagg-local"},
		{"disagg-file://d?retain=0", `retain="0": want a positive number of checkpoints to keep, or all`},
		{"disagg-file://d?retain=-1", `retain="-1"`},
		{"disagg-file://d?retain=three", `retain="three"`},
		{"remote-read://b/p?retain=", `retain=""`},
		{"disagg-local://?retain=3", "unknown option retain"},
	}
	for _, tc := range cases {
		t.Run(tc.uri, func(t *testing.T) {
			_, err := Open(tc.uri, Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

func TestRemoteReadNeedsRegisteredPool(t *testing.T) {
	openersMu.Lock()
	saved := openers[RemoteRead]
	delete(openers, RemoteRead)
	openersMu.Unlock()
	defer RegisterPool(RemoteRead, saved)
	if saved == nil {
		defer func() { openersMu.Lock(); delete(openers, RemoteRead); openersMu.Unlock() }()
	}
	_, err := Open("remote-read://b/p", Options{})
	if err == nil || !strings.Contains(err.Error(), "needs its pool linked in") {
		t.Fatalf("error = %v", err)
	}
	var got *url.URL
	RegisterPool(RemoteRead, func(u *url.URL) (state.RemotePool, error) {
		got = u
		if u.Query().Has("bogus") {
			return nil, errors.New("unknown option bogus")
		}
		return mempool.New(), nil
	})
	f, err := Open("remote-read://b/p?endpoint=http://127.0.0.1:1&io_threads=2", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got.Host != "b" || got.Query().Get("endpoint") != "http://127.0.0.1:1" || got.Query().Has("io_threads") {
		t.Fatalf("opener got %v", got)
	}
	if _, err := Open("remote-read://b/p?bogus=1", Options{}); err == nil || !strings.Contains(err.Error(), "bogus") {
		t.Fatalf("opener error not surfaced: %v", err)
	}
}

func TestFactoryBackendsSharePool(t *testing.T) {
	for _, uri := range []string{"memory://", "disagg-local://?hot_max_bytes=0", "disagg-local://?latency=1ms"} {
		t.Run(uri, func(t *testing.T) {
			f, err := Open(uri, Options{HashSeed: 7})
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, ok := f.Faults(); !ok {
				t.Fatal("local pools must expose fault injection")
			}
			if _, err := f.New("op", 2, 2); err == nil {
				t.Fatal("subtask out of range accepted")
			}
			var bs []state.Backend
			for i := range 2 {
				b, err := f.New("op", i, 2)
				if err != nil {
					t.Fatal(err)
				}
				defer b.Close()
				bs = append(bs, b)
			}
			if err := bs[0].Put(1, []byte("k"), []byte("v")); err != nil {
				t.Fatal(err)
			}
			if err := bs[0].Snapshot(context.Background(), 1); err != nil {
				t.Fatal(err)
			}
			head, _ := f.Pool().Latest(context.Background())
			if head != 1 {
				t.Fatalf("pool head = %d", head)
			}
			if _, ok := bs[0].(state.AsyncBackend); !ok {
				t.Fatal("backends are AsyncBackends")
			}
		})
	}
}
