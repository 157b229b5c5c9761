package pools_test

import (
	"context"
	"strings"
	"testing"

	_ "clink/state/pools"
	"clink/state/stateuri"
)

// TestDisaggFileSurvivesReopen: a checkpoint committed through one factory
// is readable from a fresh factory over the same directory, as after a
// process restart.
func TestDisaggFileSurvivesReopen(t *testing.T) {
	uri := "disagg-file://" + t.TempDir() + "?hot_max_bytes=1MiB"
	ctx := context.Background()
	f1, err := stateuri.Open(uri, stateuri.Options{HashSeed: 1})
	if err != nil {
		t.Fatal(err)
	}
	b1, err := f1.New("count", 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := b1.Put(1, []byte("k"), []byte("v1")); err != nil {
		t.Fatal(err)
	}
	if err := b1.Snapshot(ctx, 1); err != nil {
		t.Fatal(err)
	}
	b1.Close()
	f1.Close()

	f2, err := stateuri.Open(uri, stateuri.Options{HashSeed: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer f2.Close()
	latest, err := f2.Pool().Latest(ctx)
	if err != nil || latest != 1 {
		t.Fatalf("latest = %d, %v", latest, err)
	}
	b2, err := f2.New("count", 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	if err := b2.Restore(ctx, latest); err != nil {
		t.Fatal(err)
	}
	v, ok, err := b2.Get(1, []byte("k"))
	if err != nil || !ok || string(v) != "v1" {
		t.Fatalf("after reopen: %q %v %v", v, ok, err)
	}
}

func TestSchemesAreRegistered(t *testing.T) {
	cases := []struct{ uri, wantErr string }{
		{"disagg-file://", "needs a directory"},
		{"disagg-file:///tmp/x?latency=1ms", "unknown option latency"},
		{"remote-read://bucket/prefix?endpoint=http://127.0.0.1:1&region=us-east-1", ""},
	}
	for _, tc := range cases {
		_, err := stateuri.Open(tc.uri, stateuri.Options{})
		if tc.wantErr == "" {
			// The S3 pool is linked: the error, if any, is about reaching the server, not a missing pool.
			if err != nil && strings.Contains(err.Error(), "linked") {
				t.Fatalf("%s: %v", tc.uri, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Fatalf("%s: err = %v, want %q", tc.uri, err, tc.wantErr)
		}
	}
}
