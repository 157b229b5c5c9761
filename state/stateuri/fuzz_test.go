package stateuri

import (
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary state URIs to Parse: no panic, an error or a
// configuration with a known scheme, and a positive thread count and a
// non-negative budget for the disaggregated schemes.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"memory://",
		"disagg-local://?io_threads=4&hot_max_bytes=64MiB&latency=uniform(0.5ms,2ms)&warm_restore=true",
		"disagg-local://?latency=exp(1ms)",
		"remote-read://bucket/prefix/a?endpoint=http://127.0.0.1:8333&region=us-east-1&io_threads=8&hot_max_bytes=1GiB",
		"disagg-file:///var/lib/clink/state?hot_max_bytes=256MiB",
		"disagg-file://./rel",
		"remote-read://?endpoint=x",
		"memory://?x=1",
		"disagg-local://?io_threads=0",
		"disagg-local://?hot_max_bytes=-1",
		"%zz://",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, uri string) {
		cfg, _, err := Parse(uri)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "state uri ") {
				t.Fatalf("error does not name the URI: %v", err)
			}
			return
		}
		switch cfg.Scheme {
		case Memory:
		case DisaggLocal, DisaggFile, RemoteRead:
			if cfg.IOThreads <= 0 || cfg.HotMaxBytes < 0 {
				t.Fatalf("%q: io_threads %d, hot_max_bytes %d", uri, cfg.IOThreads, cfg.HotMaxBytes)
			}
		default:
			t.Fatalf("%q: unknown scheme %q accepted", uri, cfg.Scheme)
		}
	})
}
