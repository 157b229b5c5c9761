package repl

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"clink/server"
)

// fakeKeys delivers seq as key presses, then nothing until the reader
// stops.
func fakeKeys(seq ...byte) func(ctx context.Context) (<-chan byte, func()) {
	return func(ctx context.Context) (<-chan byte, func()) {
		ch := make(chan byte)
		done := make(chan struct{})
		go func() {
			defer close(done)
			defer close(ch)
			for _, k := range seq {
				select {
				case ch <- k:
				case <-ctx.Done():
					return
				}
			}
			<-ctx.Done()
		}()
		return ch, func() { <-done }
	}
}

// startAttachServer serves a running view v on 127.0.0.1, telling
// clients attach as its attach address.
func startAttachServer(t *testing.T, attach string) string {
	t.Helper()
	srv, err := server.New(server.Config{StateURI: "memory://", Listen: "127.0.0.1:0", Parallelism: 1,
		CheckpointInterval: 100 * time.Millisecond, AttachAddr: attach})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	t.Cleanup(func() {
		if err := srv.Close(context.Background()); err != nil {
			t.Error(err)
		}
		if err := <-served; err != nil {
			t.Error(err)
		}
	})
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.csv"), []byte("id\n1\n2\n3\n4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, sql := range []string{ // a watched directory: the view's job runs until stopped
		`CREATE TABLE seq (id BIGINT) WITH (connector='csv', path='` + dir + `', format='csv', header='true', 'source.monitor-interval'='1s')`,
		`CREATE MATERIALIZED VIEW v AS SELECT id % 3 AS g, COUNT(*) AS n FROM seq GROUP BY id % 3`,
	} {
		if _, _, err := srv.Query(context.Background(), sql); err != nil {
			t.Fatal(err)
		}
	}
	return ln.Addr().String()
}

// TestRemoteAttachedDashboard: in `clink repl --connect`, t during a
// SUBSCRIBE stops it and opens the attached dashboard over the view's job
// at the server's attach address; \tui [VIEW] opens it from the prompt;
// without an attach address or a terminal the shell says why instead.
func TestRemoteAttachedDashboard(t *testing.T) {
	withAttach := startAttachServer(t, "127.0.0.1:9249")
	without := startAttachServer(t, "")
	for _, tc := range []struct {
		name   string
		server string
		live   bool
		keys   []byte
		script string
		want   []string // the (addr, job) pairs the dashboard opened on
		out    string
	}{
		{"t in SUBSCRIBE", withAttach, true, []byte{'t', 'q'}, "SUBSCRIBE TO v", []string{"127.0.0.1:9249 v"}, "-- SUBSCRIBE stopped: the dashboard watches v's job"},
		{"T in COPY SUBSCRIBE", withAttach, true, []byte{'x', 'T', 'q'}, "COPY (SUBSCRIBE TO v) TO STDOUT", []string{"127.0.0.1:9249 v"}, "the dashboard watches v's job"},
		{"q still stops", withAttach, true, []byte{'q'}, "SUBSCRIBE TO v", nil, "canceling statement"},
		{"t without an attach address", without, true, []byte{'t', 'q'}, "SUBSCRIBE TO v", nil, "canceling statement"},
		{"\\tui VIEW", withAttach, true, nil, `\tui v`, []string{"127.0.0.1:9249 v"}, ""},
		{"\\tui picks", withAttach, true, nil, `\tui`, []string{"127.0.0.1:9249 "}, ""},
		{"\\tui without an attach address", without, true, nil, `\tui v`, nil, "start clink serve with --metrics"},
		{"\\tui without a terminal", withAttach, false, nil, `\tui v`, nil, "needs a terminal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var opened []string
			opts := Options{Live: tc.live, Keys: fakeKeys(tc.keys...), Attach: func(_ context.Context, addr, job string) error {
				opened = append(opened, addr+" "+job)
				return nil
			}}
			var out bytes.Buffer
			ctx := context.Background()
			r, err := Connect(ctx, tc.server, opts, &out)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if err := r.Run(ctx, tc.script); err != nil {
				t.Fatalf("Run: %v\n%s", err, out.String())
			}
			if strings.Join(opened, ";") != strings.Join(tc.want, ";") {
				t.Errorf("dashboards opened %q, want %q", opened, tc.want)
			}
			if !strings.Contains(out.String(), tc.out) {
				t.Errorf("output %q, want it to contain %q", out.String(), tc.out)
			}
		})
	}
}
