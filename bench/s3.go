package bench

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"time"

	_ "clink/state/pools" // registers remote-read:// for the s3 suite
)

// s3Endpoint returns the local S3 endpoint from CLINK_S3_ENDPOINT, or why
// the s3 suite is skipped.
func s3Endpoint() (*url.URL, string) {
	ep := os.Getenv("CLINK_S3_ENDPOINT")
	if ep == "" {
		return nil, "CLINK_S3_ENDPOINT is not set (start one with `make s3`, then eval \"$(scripts/s3.sh env)\")"
	}
	u, err := url.Parse(ep)
	if err != nil || u.Hostname() != "127.0.0.1" {
		return nil, fmt.Sprintf("CLINK_S3_ENDPOINT=%q is not an http://127.0.0.1:PORT address (clink bench talks to loopback only)", ep)
	}
	c, err := net.DialTimeout("tcp", u.Host, time.Second)
	if err != nil {
		return nil, fmt.Sprintf("no S3 server answers at %s: %v", u.Host, err)
	}
	c.Close()
	return u, ""
}

func runS3(ctx context.Context, e *Env) error {
	ep, why := s3Endpoint()
	if ep == nil {
		e.logf("skipped: %s", why)
		e.skip(why)
		return nil
	}
	// The S3 pool reads credentials from the AWS_* variables; scripts/s3.sh
	// exports them as CLINK_S3_*.
	for aws, clink := range map[string]string{"AWS_ACCESS_KEY_ID": "CLINK_S3_ACCESS_KEY", "AWS_SECRET_ACCESS_KEY": "CLINK_S3_SECRET_KEY"} {
		if os.Getenv(aws) == "" && os.Getenv(clink) != "" {
			if err := os.Setenv(aws, os.Getenv(clink)); err != nil {
				return fmt.Errorf("s3 credentials: %w", err)
			}
		}
	}
	bucket := os.Getenv("CLINK_S3_BUCKET")
	if bucket == "" {
		bucket = "clink-test"
	}
	const par = 2
	run := 0
	remote := func(hot int64) string {
		run++ // a fresh prefix per run: every run starts from empty state
		return fmt.Sprintf("remote-read://%s/bench-%d-%d?endpoint=%s&region=us-east-1&hot_max_bytes=%d",
			bucket, time.Now().UnixNano(), run, url.QueryEscape(ep.String()), max(hot, 1))
	}
	ws := []workload{
		sqlWorkload("groupby", GroupByQuery, e.size(100_000, 20_000), e.size(5_000, 2_000), par),
		counterWorkload(e.size(100_000, 20_000), e.size(1_000, 300), e.size(50_000, 10_000), par),
	}
	for _, w := range ws {
		w.note += "; remote-read:// on the local S3 server"
		if err := overlapOne(ctx, e, w, remote, "S3 latency", par); err != nil {
			return err
		}
	}
	return nil
}
