package s3pool

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"clink/state/objpool"
)

// faults is the seeded fault mix the in-process transport injects.
type faults struct {
	slowDown float64 // chance a request starts a burst of 503 SlowDown
	burst    int     // length of a SlowDown burst
	internal float64 // chance of a 500 InternalError
	drop     float64 // chance the request runs but its response is lost
}

// fakeS3 is an aws.HTTPClient that serves requests from gofakes3's handler
// in process, with no sockets, injecting seeded faults. Each fault is
// decided by the request's identity (method, path and query) and how many
// times that request was sent before, never by arrival order, so a seed
// replays however concurrent requests interleave (under -race and load).
type fakeS3 struct {
	h        http.Handler
	mu       sync.Mutex
	seed     uint64
	f        faults
	sent     map[string]int // attempts so far per request identity
	burst    map[string]int // 503s left in each identity's burst
	override func(*http.Request) (int, string)
	injected map[string]int
}

func newFakeS3(t testing.TB, seed uint64, f faults, buckets ...string) *fakeS3 {
	t.Helper()
	be := s3mem.New()
	for _, b := range buckets {
		if err := be.CreateBucket(b); err != nil {
			t.Fatal(err)
		}
	}
	return &fakeS3{
		h:        gofakes3.New(be).Server(),
		seed:     seed,
		f:        f,
		sent:     map[string]int{},
		burst:    map[string]int{},
		injected: map[string]int{},
	}
}

const errorXML = `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>%s</Message><RequestId>fake</RequestId></Error>`

func xmlError(status int, code, msg string) *http.Response {
	rec := httptest.NewRecorder()
	rec.Header().Set("Content-Type", "application/xml")
	rec.WriteHeader(status)
	fmt.Fprintf(rec, errorXML, code, msg)
	return rec.Result()
}

// decide picks this request's fault from its identity and attempt number.
func (f *fakeS3) decide(req *http.Request) string {
	id := req.Method + " " + req.URL.Path + "?" + req.URL.RawQuery
	f.mu.Lock()
	defer f.mu.Unlock()
	attempt := f.sent[id]
	f.sent[id]++
	h := fnv.New64a()
	fmt.Fprintf(h, "%d %s %d", f.seed, id, attempt)
	u := func(i uint64) float64 { return float64(splitmix(h.Sum64()+i*0x9e3779b97f4a7c15)>>11) / (1 << 53) }
	fault := ""
	switch {
	case attempt >= maxFaultsPerRequest:
		// the retry budget (8 attempts) always outlasts the faults
	case f.burst[id] > 0:
		f.burst[id]--
		fault = "slowdown"
	case f.f.slowDown > 0 && u(1) < f.f.slowDown:
		f.burst[id] = f.f.burst - 1
		fault = "slowdown"
	case f.f.internal > 0 && u(2) < f.f.internal:
		fault = "internal"
	case f.f.drop > 0 && u(3) < f.f.drop:
		fault = "drop"
	}
	if fault != "" {
		f.injected[fault]++
	}
	return fault
}

// maxFaultsPerRequest bounds the faults one request identity meets, below
// the pool's retry budget, so a faulty run tests retries, not luck.
const maxFaultsPerRequest = 5

// splitmix is SplitMix64's finalizer: nearby inputs give unrelated
// outputs, so each attempt's draws are independent.
func splitmix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

func (f *fakeS3) count(fault string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.injected[fault]
}

// Do serves req in process.
func (f *fakeS3) Do(req *http.Request) (*http.Response, error) {
	if f.override != nil {
		status, code := f.override(req)
		return xmlError(status, code, "injected by the test"), nil
	}
	fault := f.decide(req)
	switch fault {
	case "slowdown":
		return xmlError(http.StatusServiceUnavailable, "SlowDown", "Please reduce your request rate."), nil
	case "internal":
		return xmlError(http.StatusInternalServerError, "InternalError", "We encountered an internal error."), nil
	}
	sreq := req.Clone(req.Context())
	if sreq.Body == nil {
		sreq.Body = http.NoBody
	}
	sreq.RequestURI = req.URL.RequestURI()
	if req.ContentLength >= 0 && req.Body != nil {
		sreq.Header.Set("Content-Length", strconv.FormatInt(req.ContentLength, 10))
	}
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, sreq)
	if fault == "drop" {
		return nil, errors.New("read tcp 127.0.0.1:1->127.0.0.1:2: connection reset by peer")
	}
	resp := rec.Result()
	resp.Request = req
	return resp, nil
}

// testConfig is a Config for the fake: a secret the tests look for in
// error messages.
func testConfig(client *fakeS3, bucket string) Config {
	return Config{
		Bucket: bucket, Prefix: "jobs/j1", Endpoint: "http://127.0.0.1:1", Region: "us-east-1",
		AccessKeyID: "AKIDTEST", SecretAccessKey: "s3cr3t-never-printed",
		HTTPClient: client,
	}
}

func mustStore(t testing.TB, cfg Config) *Store {
	t.Helper()
	s, err := NewStore(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestFakeTransportRoundTrip(t *testing.T) {
	s := mustStore(t, testConfig(newFakeS3(t, 1, faults{}, "clink"), "clink"))
	ctx := context.Background()
	etag, err := s.PutIfAbsent(ctx, "a", []byte("hello"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutIfAbsent(ctx, "a", []byte("x")); !strings.Contains(fmt.Sprint(err), "precondition") {
		t.Fatalf("second PutIfAbsent = %v, want precondition failed", err)
	}
	b, getTag, err := s.Get(ctx, "a")
	if err != nil || string(b) != "hello" || getTag != etag {
		t.Fatalf("Get = %q %s %v; want hello %s", b, getTag, err, etag)
	}
	if r, size, err := s.GetRange(ctx, "a", 1, 3); err != nil || string(r) != "ell" || size != 5 {
		t.Fatalf("GetRange = %q, %d, %v", r, size, err)
	}
	if _, _, err := s.GetRange(ctx, "a", 3, 3); !errors.Is(err, objpool.ErrShort) {
		t.Fatalf("GetRange past the end = %v, want ErrShort", err)
	}
	if _, err := s.PutIfMatch(ctx, "a", []byte("y"), `"bogus"`); !strings.Contains(fmt.Sprint(err), "precondition") {
		t.Fatalf("PutIfMatch with a stale etag = %v, want precondition failed", err)
	}
	if _, err := s.PutIfMatch(ctx, "a", []byte("y"), etag); err != nil {
		t.Fatalf("PutIfMatch = %v", err)
	}
	if _, _, err := s.Get(ctx, "missing"); !strings.Contains(fmt.Sprint(err), "not found") {
		t.Fatalf("Get(missing) = %v, want not found", err)
	}
}
