package async

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Latency is a distribution of remote-read delays, used to make overlap
// visible without a real object store and to drive the simulated executor.
type Latency interface {
	Sample(r *rand.Rand) time.Duration
	String() string
}

// Fixed is a constant latency.
type Fixed time.Duration

// Sample returns the constant.
func (f Fixed) Sample(*rand.Rand) time.Duration { return time.Duration(f) }
func (f Fixed) String() string                  { return time.Duration(f).String() }

// Uniform draws uniformly from [Min, Max].
type Uniform struct{ Min, Max time.Duration }

// Sample draws one delay.
func (u Uniform) Sample(r *rand.Rand) time.Duration {
	if u.Max <= u.Min {
		return u.Min
	}
	return u.Min + time.Duration(r.Int64N(int64(u.Max-u.Min)+1))
}
func (u Uniform) String() string { return fmt.Sprintf("uniform(%s,%s)", u.Min, u.Max) }

// Exponential draws from an exponential distribution with the given mean,
// the long tail of a real object store.
type Exponential struct{ Mean time.Duration }

// Sample draws one delay.
func (e Exponential) Sample(r *rand.Rand) time.Duration {
	return time.Duration(r.ExpFloat64() * float64(e.Mean))
}
func (e Exponential) String() string { return fmt.Sprintf("exp(%s)", e.Mean) }

// ParseLatency reads "0", "1ms", "uniform(0.5ms,2ms)" or "exp(1ms)".
func ParseLatency(s string) (Latency, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "0" {
		return Fixed(0), nil
	}
	name, args, ok := strings.Cut(s, "(")
	if !ok {
		d, err := parseNonNegative(s)
		if err != nil {
			return nil, fmt.Errorf("latency %q: %w", s, err)
		}
		return Fixed(d), nil
	}
	if !strings.HasSuffix(args, ")") {
		return nil, fmt.Errorf("latency %q: missing closing parenthesis", s)
	}
	parts := strings.Split(strings.TrimSuffix(args, ")"), ",")
	ds := make([]time.Duration, len(parts))
	for i, p := range parts {
		d, err := parseNonNegative(strings.TrimSpace(p))
		if err != nil {
			return nil, fmt.Errorf("latency %q: argument %d: %w", s, i+1, err)
		}
		ds[i] = d
	}
	switch strings.TrimSpace(name) {
	case "uniform":
		if len(ds) != 2 || ds[1] < ds[0] {
			return nil, fmt.Errorf("latency %q: uniform takes (min,max) with min <= max", s)
		}
		return Uniform{ds[0], ds[1]}, nil
	case "exp":
		if len(ds) != 1 {
			return nil, fmt.Errorf("latency %q: exp takes one mean", s)
		}
		return Exponential{ds[0]}, nil
	}
	return nil, fmt.Errorf("latency %q: unknown distribution %q (want a duration, uniform(a,b) or exp(mean))", s, name)
}

func parseNonNegative(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, err
	}
	if d < 0 {
		return 0, fmt.Errorf("negative duration %s", d)
	}
	return d, nil
}

func preadFull(fd int, buf []byte, off int64) (int, error) {
	return unix.Pread(fd, buf, off)
}
