package s3pool

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"net/url"
	"os"
	"strings"
	"testing"

	"clink/state"
	"clink/state/objpool"
	"clink/state/objpool/objpooltest"
)

// integrationConfig reads the real S3 server scripts/s3.sh starts, or skips.
func integrationConfig(t *testing.T) Config {
	t.Helper()
	ep := os.Getenv("CLINK_S3_ENDPOINT")
	if ep == "" {
		t.Skip("CLINK_S3_ENDPOINT not set: run `make s3` (scripts/s3.sh start)")
	}
	u, err := url.Parse(ep)
	if err != nil || (u.Hostname() != "127.0.0.1" && u.Hostname() != "localhost") {
		t.Fatalf("CLINK_S3_ENDPOINT=%q: tests only talk to 127.0.0.1", ep)
	}
	cfg := Config{
		Bucket: envOr("CLINK_S3_BUCKET", "clink-test"), Endpoint: ep, Region: "us-east-1",
		AccessKeyID: os.Getenv("CLINK_S3_ACCESS_KEY"), SecretAccessKey: os.Getenv("CLINK_S3_SECRET_KEY"),
	}
	cfg.FromEnv()
	var b [6]byte
	_, _ = crand.Read(b[:])
	cfg.Prefix = "it/" + t.Name() + "-" + hex.EncodeToString(b[:])
	return cfg
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func TestIntegrationConformance(t *testing.T) {
	base := integrationConfig(t)
	n := 0
	objpooltest.Run(t, func(t *testing.T) objpool.ObjectStore {
		cfg := base
		n++
		cfg.Prefix = base.Prefix + "/" + string(rune('a'+n%26)) + hex.EncodeToString([]byte{byte(n)})
		return mustStore(t, cfg)
	})
}

func TestIntegrationCommitRestore(t *testing.T) {
	ctx := context.Background()
	cfg := integrationConfig(t)
	p, err := New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	model := objpooltest.Model{}
	rng := rand.New(rand.NewPCG(1, 2))
	for id := state.CheckpointID(1); id <= 5; id++ {
		if err := p.Commit(ctx, objpooltest.Workload(rng, model, id, 2000, 5000)); err != nil {
			t.Fatal(err)
		}
	}
	u, _ := url.Parse("remote-read://" + cfg.Bucket + "/" + cfg.Prefix + "?endpoint=" + url.QueryEscape(cfg.Endpoint))
	t.Setenv("AWS_ACCESS_KEY_ID", cfg.AccessKeyID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", cfg.SecretAccessKey)
	r, err := Open(u)
	if err != nil {
		t.Fatal(err)
	}
	if id, err := r.Latest(ctx); err != nil || id != 5 {
		t.Fatalf("Latest = %d, %v", id, err)
	}
	if err := r.Restore(ctx, 5); err != nil {
		t.Fatal(err)
	}
	objpooltest.Check(t, r, model, 5000)
}

func TestIntegrationClearErrors(t *testing.T) {
	ctx := context.Background()
	good := integrationConfig(t)
	bad := good
	bad.SecretAccessKey = "wrong-secret"
	_, err := New(ctx, bad)
	if !errors.Is(err, objpool.ErrBadCredentials) && !errors.Is(err, objpool.ErrAccessDenied) {
		t.Fatalf("New with a wrong secret = %v, want bad credentials", err)
	}
	if strings.Contains(err.Error(), bad.SecretAccessKey) {
		t.Fatalf("error %q prints the secret", err)
	}
	t.Log(err)
	missing := good
	missing.Bucket = "clink-no-such-bucket"
	if _, err := New(ctx, missing); !errors.Is(err, objpool.ErrNoBucket) {
		t.Fatalf("New on a missing bucket = %v, want no such bucket", err)
	} else {
		t.Log(err)
	}
}
