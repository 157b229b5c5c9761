package s3pool

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"clink/state"
	"clink/state/objpool"
)

// Scheme is the state URI scheme this package serves.
const Scheme = "remote-read"

// Config configures an S3 pool.
type Config struct {
	Bucket string
	Prefix string
	// Endpoint is the S3 endpoint URL (http://127.0.0.1:8333); empty means
	// AWS's regional endpoint. The client talks to no other address.
	Endpoint string
	Region   string
	// Static credentials; FromEnv fills them from the standard AWS vars.
	AccessKeyID     string
	SecretAccessKey string
	SessionToken    string
	// HTTPClient replaces the default client (tests use an in-process one).
	HTTPClient aws.HTTPClient
	// Pool tunes the object layout, retries and breaker; its Store is set
	// by New.
	Pool objpool.Config
}

// FromEnv fills empty credentials and region from AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN and AWS_REGION.
func (c *Config) FromEnv() {
	set := func(dst *string, env string) {
		if *dst == "" {
			*dst = os.Getenv(env)
		}
	}
	set(&c.AccessKeyID, "AWS_ACCESS_KEY_ID")
	set(&c.SecretAccessKey, "AWS_SECRET_ACCESS_KEY")
	set(&c.SessionToken, "AWS_SESSION_TOKEN")
	set(&c.Region, "AWS_REGION")
}

func (c *Config) validate() error {
	if c.Bucket == "" {
		return errors.New("s3pool: no bucket (want remote-read://BUCKET/PREFIX)")
	}
	if c.Endpoint != "" {
		u, err := url.Parse(c.Endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("s3pool: endpoint %q is not an http(s)://host:port URL", c.Endpoint)
		}
	}
	if c.AccessKeyID == "" || c.SecretAccessKey == "" {
		return fmt.Errorf("s3pool: no credentials for s3://%s: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY", c.Bucket)
	}
	if c.Region == "" {
		c.Region = "us-east-1"
	}
	return nil
}

// Pool is a state.RemotePool on S3.
type Pool struct {
	*objpool.Pool
	store *Store
}

// NewStore builds the ObjectStore alone: the S3 client with path-style
// addressing, static credentials and no SDK retries (objpool retries on
// its injected clock).
func NewStore(cfg Config) (*Store, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{
			Timeout:       time.Minute,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	opts := s3.Options{
		Region:                     cfg.Region,
		UsePathStyle:               true,
		Credentials:                credentials.NewStaticCredentialsProvider(cfg.AccessKeyID, cfg.SecretAccessKey, cfg.SessionToken),
		Retryer:                    aws.NopRetryer{},
		HTTPClient:                 hc,
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	}
	if cfg.Endpoint != "" {
		opts.BaseEndpoint = aws.String(cfg.Endpoint)
	}
	return &Store{client: s3.New(opts), bucket: cfg.Bucket, prefix: prefixOf(cfg.Prefix), endpoint: cfg.Endpoint}, nil
}

// New builds the pool and probes CURRENT once, so a missing bucket, a
// denied prefix or bad credentials fail here with a clear error.
func New(ctx context.Context, cfg Config) (*Pool, error) {
	st, err := NewStore(cfg)
	if err != nil {
		return nil, err
	}
	pc := cfg.Pool
	pc.Store = st
	p, err := objpool.New(pc)
	if err != nil {
		return nil, err
	}
	// A damaged CURRENT opens: restore by id still works (objpool
	// headless.go), and Latest reports the damage.
	if _, err := p.Latest(ctx); err != nil && !errors.Is(err, state.ErrCorrupt) {
		return nil, fmt.Errorf("s3pool: open: %w", err)
	}
	return &Pool{Pool: p, store: st}, nil
}

// ParseURI reads remote-read://BUCKET/PREFIX?endpoint=URL&region=R into a
// Config with credentials from the environment; retain=N (default
// objpool.DefaultRetain, or all) sets how many checkpoints garbage
// collection keeps restorable. Other query parameters
// (io_threads, hot_max_bytes, ...) belong to the backend and are ignored.
func ParseURI(u *url.URL) (Config, error) {
	if u.Scheme != Scheme {
		return Config{}, fmt.Errorf("s3pool: scheme %q, want %s://BUCKET/PREFIX", u.Scheme, Scheme)
	}
	q := u.Query()
	cfg := Config{Bucket: u.Host, Prefix: prefixOf(u.Path), Endpoint: q.Get("endpoint"), Region: q.Get("region")}
	retain, err := objpool.RetainOf(q)
	if err != nil {
		return Config{}, fmt.Errorf("s3pool: %w", err)
	}
	cfg.Pool.Retain = retain
	cfg.FromEnv()
	return cfg, cfg.validate()
}

// Open builds a pool from a remote-read:// URI (the state URI factory's
// hook), probing the bucket within 30 seconds.
func Open(u *url.URL) (state.RemotePool, error) {
	cfg, err := ParseURI(u)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return New(ctx, cfg)
}
