package s3pool

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"clink/state"
	"clink/state/objpool"
	"clink/state/objpool/objpooltest"
)

func TestConformanceGofakes3(t *testing.T) {
	objpooltest.Run(t, func(t *testing.T) objpool.ObjectStore {
		return mustStore(t, testConfig(newFakeS3(t, 1, faults{}, "clink"), "clink"))
	})
}

// With 503 bursts, 500s and lost responses on every request, the protocol
// still commits, restores and fences correctly.
func TestConformanceGofakes3Faulty(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		t.Run("seed="+string(rune('0'+seed)), func(t *testing.T) {
			objpooltest.Run(t, func(t *testing.T) objpool.ObjectStore {
				f := faults{slowDown: 0.03, burst: 3, internal: 0.03, drop: 0.03}
				return mustStore(t, testConfig(newFakeS3(t, seed, f, "clink"), "clink"))
			})
		})
	}
}

func TestThrottlingRetriedOnFakeClock(t *testing.T) {
	ctx := context.Background()
	fake := newFakeS3(t, 42, faults{slowDown: 0.2, burst: 4, internal: 0.05, drop: 0.05}, "clink")
	clock := objpooltest.NewFakeClock()
	cfg := testConfig(fake, "clink")
	cfg.Pool = objpool.Config{Clock: clock, Partitions: 4, Breaker: objpool.BreakerPolicy{Threshold: 50}, Retry: objpool.RetryPolicy{MaxAttempts: 20},
		WriterID: "throttle-test"} // object keys, so the faults drawn from them, are the same every run
	start := time.Now()
	p, err := New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	model := objpooltest.Model{}
	rng := rand.New(rand.NewPCG(1, 1))
	const commits = 8 // enough requests for every fault kind to come up
	for id := state.CheckpointID(1); id <= commits; id++ {
		if err := p.Commit(ctx, objpooltest.Workload(rng, model, id, 100, 200)); err != nil {
			t.Fatalf("commit %d: %v", id, err)
		}
	}
	r, err := New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Restore(ctx, commits); err != nil {
		t.Fatal(err)
	}
	objpooltest.Check(t, r, model, 200)
	if fake.count("slowdown") < 10 || fake.count("drop") == 0 || fake.count("internal") == 0 {
		t.Fatalf("too few faults injected: %v", fake.injected)
	}
	if clock.Slept() == 0 {
		t.Fatal("retries did not back off on the injected clock")
	}
	if wall := time.Since(start); wall > 10*time.Second {
		t.Fatalf("took %s of wall time: retries slept for real", wall)
	}
	t.Logf("faults %v, virtual backoff %s", fake.injected, clock.Slept())
}

func TestBreakerOpensOnOutage(t *testing.T) {
	ctx := context.Background()
	fake := newFakeS3(t, 1, faults{}, "clink")
	clock := objpooltest.NewFakeClock()
	cfg := testConfig(fake, "clink")
	cfg.Pool = objpool.Config{Clock: clock, Breaker: objpool.BreakerPolicy{Threshold: 4, Cooldown: time.Minute}}
	p, err := New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	fake.override = func(*http.Request) (int, string) { return http.StatusServiceUnavailable, "SlowDown" }
	if _, err := p.Latest(ctx); !errors.Is(err, objpool.ErrTransient) {
		t.Fatalf("Latest during outage = %v, want transient", err)
	}
	if _, err := p.Latest(ctx); !errors.Is(err, objpool.ErrCircuitOpen) || !p.BreakerOpen() {
		t.Fatalf("Latest after repeated failures = %v, want the breaker open", err)
	}
	fake.override = nil
	clock.Advance(time.Minute)
	if _, err := p.Latest(ctx); err != nil {
		t.Fatalf("Latest after recovery = %v", err)
	}
}

func TestClearErrors(t *testing.T) {
	tests := []struct {
		name     string
		bucket   string
		override func(*http.Request) (int, string)
		want     error
		mention  string
	}{
		{"no such bucket", "absent", nil, objpool.ErrNoBucket, "s3://absent/jobs/j1"},
		{"access denied", "clink", func(*http.Request) (int, string) { return 403, "AccessDenied" }, objpool.ErrAccessDenied, "s3:GetObject"},
		{"bad key id", "clink", func(*http.Request) (int, string) { return 403, "InvalidAccessKeyId" }, objpool.ErrBadCredentials, "AWS_ACCESS_KEY_ID"},
		{"bad signature", "clink", func(*http.Request) (int, string) { return 403, "SignatureDoesNotMatch" }, objpool.ErrBadCredentials, "endpoint http://127.0.0.1:1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake := newFakeS3(t, 1, faults{}, "clink")
			fake.override = tc.override
			cfg := testConfig(fake, tc.bucket)
			cfg.Pool.Clock = objpooltest.NewFakeClock()
			_, err := New(context.Background(), cfg)
			if !errors.Is(err, tc.want) {
				t.Fatalf("New = %v, want %v", err, tc.want)
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.mention) || strings.Contains(msg, cfg.SecretAccessKey) {
				t.Fatalf("error %q must mention %q and never the secret", msg, tc.mention)
			}
		})
	}
}

func TestParseURI(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "AKID")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_SESSION_TOKEN", "")
	t.Setenv("AWS_REGION", "eu-west-1")
	tests := []struct {
		uri, err           string
		bucket, prefix, ep string
		region             string
	}{
		{uri: "remote-read://b/p/q?endpoint=http://127.0.0.1:8333&region=us-east-1&io_threads=8", bucket: "b", prefix: "p/q", ep: "http://127.0.0.1:8333", region: "us-east-1"},
		{uri: "remote-read://b", bucket: "b", region: "eu-west-1"},
		{uri: "remote-read:///p", err: "no bucket"},
		{uri: "remote-read://b?endpoint=127.0.0.1:8333", err: "not an http(s)"},
		{uri: "s3://b", err: "scheme"},
	}
	for _, tc := range tests {
		t.Run(tc.uri, func(t *testing.T) {
			u, err := url.Parse(tc.uri)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := ParseURI(u)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("ParseURI = %v, want an error containing %q", err, tc.err)
				}
				return
			}
			if err != nil || cfg.Bucket != tc.bucket || cfg.Prefix != tc.prefix || cfg.Endpoint != tc.ep || cfg.Region != tc.region {
				t.Fatalf("ParseURI = %+v, %v", cfg, err)
			}
		})
	}
	t.Run("no credentials", func(t *testing.T) {
		t.Setenv("AWS_ACCESS_KEY_ID", "")
		u, _ := url.Parse("remote-read://b/p")
		if _, err := Open(u); err == nil || !strings.Contains(err.Error(), "AWS_ACCESS_KEY_ID") {
			t.Fatalf("Open without credentials = %v", err)
		}
	})
}
