package connector

import (
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"clink/sql/ast"
	"clink/sql/types"
)

// HTTP lookup table defaults.
const (
	DefaultHTTPTimeout         = 10 * time.Second
	DefaultHTTPConcurrency     = 16
	MaxHTTPConcurrency         = 4096
	DefaultHTTPRetryBackoff    = 50 * time.Millisecond
	DefaultHTTPRetryMaxWait    = 30 * time.Second
	DefaultHTTPBreakerCooldown = 30 * time.Second
)

// HTTPSpec is an http lookup table's configuration, checked at CREATE
// TABLE. An http table is never scanned: a join from a stream on its URL
// key columns looks each row up with a GET of the URL template.
type HTTPSpec struct {
	// URL is the template as written, e.g. http://127.0.0.1:8080/users/{id}.
	URL string
	// Parts is the template split into literals and column placeholders.
	Parts []URLPart
	// KeyCols are the columns the template names, in order of first use.
	KeyCols []int
	// Format of the response body ("json").
	Format string
	// MaxConcurrency caps the lookups in flight per subtask.
	MaxConcurrency int
	// Ordered emits results in input order (else as they complete).
	Ordered bool
	// Timeout bounds one attempt.
	Timeout time.Duration
	// RetryMaxAttempts counts the first attempt (1: no retry); the waits
	// start at RetryBackoff and grow by RetryMultiplier up to RetryMaxWait.
	RetryMaxAttempts int
	RetryBackoff     time.Duration
	RetryMultiplier  float64
	RetryMaxWait     time.Duration
	// BreakerThreshold consecutive failures open the circuit breaker for
	// BreakerCooldown (0: no breaker).
	BreakerThreshold int
	BreakerCooldown  time.Duration
	// OnFailure is what a lookup that failed for good does: "fail" (the
	// query fails), "null" (the row is emitted with NULL lookup columns) or
	// "drop" (the row is dropped).
	OnFailure string
	// Adaptive names the signal that adapts the in-flight cap between
	// AdaptiveMin and MaxConcurrency ("latency" or "ready_fill"; "" off);
	// AdaptiveSetpoint is its target: seconds of mean lookup latency, or the
	// fraction of in-flight lookups ready at a poll.
	Adaptive         string
	AdaptiveSetpoint float64
	AdaptiveMin      int
}

// URLPart is a literal piece of a URL template (Col < 0) or a placeholder
// for column Col, escaped for the path (or for the query when Query).
type URLPart struct {
	Lit   string
	Col   int
	Query bool
}

// httpOptions are the keys an http table accepts.
var httpOptions = []string{
	"connector", "url", "format", "max_concurrency", "ordered", "timeout",
	"retry.max_attempts", "retry.initial_backoff", "retry.multiplier", "retry.max_backoff",
	"breaker.failure_threshold", "breaker.cooldown", "on_failure",
	"adaptive", "adaptive.setpoint", "adaptive.min",
}

// ParseHTTP checks an http table's options and URL template. Errors point
// at the offending option.
func ParseHTTP(t *Table) (*HTTPSpec, error) {
	if err := checkHTTPKeys(t); err != nil {
		return nil, err
	}
	if t.Watermark != nil {
		return nil, tableErr(t, "an http lookup table cannot declare a WATERMARK")
	}
	s := &HTTPSpec{Format: "json", Ordered: true}
	if err := s.parseURL(t); err != nil {
		return nil, err
	}
	if f, ok := t.Opt("format"); ok && !strings.EqualFold(strings.TrimSpace(f), "json") {
		return nil, t.OptErr("format", "only 'json' is supported, got %q", f)
	}
	var err error
	if s.Ordered, err = t.BoolOpt("ordered", true); err != nil {
		return nil, err
	}
	if err := s.parseNumbers(t); err != nil {
		return nil, err
	}
	if err := s.parseDurations(t); err != nil {
		return nil, err
	}
	s.OnFailure = "fail"
	if v, ok := t.Opt("on_failure"); ok {
		s.OnFailure = strings.ToLower(strings.TrimSpace(v))
		if s.OnFailure != "fail" && s.OnFailure != "null" && s.OnFailure != "drop" {
			return nil, t.OptErr("on_failure", "want fail, null or drop, got %q", v)
		}
	}
	if err := s.parseAdaptive(t); err != nil {
		return nil, err
	}
	return s, nil
}

// parseAdaptive reads the adaptive in-flight cap: a signal, its setpoint
// (a duration for latency, a fraction for ready_fill) and the lowest cap.
func (s *HTTPSpec) parseAdaptive(t *Table) error {
	v, ok := t.Opt("adaptive")
	s.Adaptive = strings.ToLower(strings.TrimSpace(v))
	switch s.Adaptive {
	case "", "off":
		s.Adaptive = ""
		for _, k := range []string{"adaptive.setpoint", "adaptive.min"} {
			if _, set := t.Opt(k); set {
				return t.OptErr(k, "needs adaptive = 'latency' or 'ready_fill'")
			}
		}
		return nil
	case "latency", "ready_fill":
	default:
		if ok {
			return t.OptErr("adaptive", "want off, latency or ready_fill, got %q", v)
		}
	}
	sp, ok := t.Opt("adaptive.setpoint")
	if !ok {
		return t.OptErr("adaptive", "needs adaptive.setpoint (a latency such as '50ms', or a ready fraction such as '0.5')")
	}
	sp = strings.TrimSpace(sp)
	if s.Adaptive == "latency" {
		d, err := time.ParseDuration(sp)
		if err != nil || d <= 0 || d > time.Hour {
			return t.OptErr("adaptive.setpoint", "want a latency from 1ns to 1h such as '50ms', got %q", sp)
		}
		s.AdaptiveSetpoint = d.Seconds()
	} else {
		f, err := strconv.ParseFloat(sp, 64)
		if err != nil || !(f > 0 && f <= 1) {
			return t.OptErr("adaptive.setpoint", "want a fraction in (0, 1] such as '0.5', got %q", sp)
		}
		s.AdaptiveSetpoint = f
	}
	n, err := t.IntOpt("adaptive.min", 1)
	if err != nil {
		return err
	}
	if n < 1 || n > int64(s.MaxConcurrency) {
		return t.OptErr("adaptive.min", "want 1 to max_concurrency (%d), got %d", s.MaxConcurrency, n)
	}
	s.AdaptiveMin = int(n)
	return nil
}

func checkHTTPKeys(t *Table) error {
	known := map[string]bool{}
	for _, k := range httpOptions {
		known[k] = true
	}
	keys := make([]string, 0, len(t.Options))
	for k := range t.Options {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !known[k] {
			return t.OptErr(k, "unknown option for connector http (known: %s)", strings.Join(httpOptions[1:], ", "))
		}
	}
	return nil
}

func tableErr(t *Table, msg string) error { return ast.Errorf(t.At, "table %s: %s", t.Name, msg) }

func (s *HTTPSpec) parseNumbers(t *Table) error {
	n, err := t.IntOpt("max_concurrency", DefaultHTTPConcurrency)
	if err != nil {
		return err
	}
	if n < 1 || n > MaxHTTPConcurrency {
		return t.OptErr("max_concurrency", "want 1 to %d, got %d", MaxHTTPConcurrency, n)
	}
	s.MaxConcurrency = int(n)
	if n, err = t.IntOpt("retry.max_attempts", 1); err != nil {
		return err
	}
	if n < 1 || n > 100 {
		return t.OptErr("retry.max_attempts", "want 1 to 100 (1: no retry), got %d", n)
	}
	s.RetryMaxAttempts = int(n)
	if s.RetryMultiplier, err = t.FloatOpt("retry.multiplier", 2); err != nil {
		return err
	}
	if !(s.RetryMultiplier >= 1 && s.RetryMultiplier <= 100) {
		return t.OptErr("retry.multiplier", "want a number from 1 to 100, got %v", s.RetryMultiplier)
	}
	if n, err = t.IntOpt("breaker.failure_threshold", 0); err != nil {
		return err
	}
	if n < 0 || n > 1_000_000 {
		return t.OptErr("breaker.failure_threshold", "want 0 (no breaker) to 1000000, got %d", n)
	}
	s.BreakerThreshold = int(n)
	return nil
}

func (s *HTTPSpec) parseDurations(t *Table) error {
	for _, d := range []struct {
		key string
		dst *time.Duration
		def time.Duration
		min time.Duration
	}{
		{"timeout", &s.Timeout, DefaultHTTPTimeout, time.Millisecond},
		{"retry.initial_backoff", &s.RetryBackoff, DefaultHTTPRetryBackoff, 0},
		{"retry.max_backoff", &s.RetryMaxWait, DefaultHTTPRetryMaxWait, 0},
		{"breaker.cooldown", &s.BreakerCooldown, DefaultHTTPBreakerCooldown, time.Millisecond},
	} {
		v, ok := t.Opt(d.key)
		if !ok {
			*d.dst = d.def
			continue
		}
		x, err := time.ParseDuration(strings.TrimSpace(v))
		if err != nil {
			return t.OptErr(d.key, "want a duration such as '200ms' or '2s', got %q", v)
		}
		if x < d.min || x > 24*time.Hour {
			return t.OptErr(d.key, "want %s to 24h, got %s", d.min, x)
		}
		*d.dst = x
	}
	return nil
}

// parseURL checks the template: plain http://, a fixed host (placeholders
// only in the path and query), every placeholder a column.
func (s *HTTPSpec) parseURL(t *Table) error {
	raw, ok := t.Opt("url")
	if !ok || strings.TrimSpace(raw) == "" {
		return tableErr(t, fmt.Sprintf("connector http needs a url option, e.g. url='http://127.0.0.1:8080/%s/{%s}'", t.Name, firstCol(t)))
	}
	s.URL = raw
	rest, ok := strings.CutPrefix(raw, "http://")
	if !ok {
		if strings.HasPrefix(strings.ToLower(raw), "https://") {
			return t.OptErr("url", "https is not supported (no TLS); use http://")
		}
		return t.OptErr("url", "want an http:// URL, got %q", raw)
	}
	host, _, _ := strings.Cut(rest, "/")
	host, _, _ = strings.Cut(host, "?")
	if host == "" || strings.ContainsAny(host, "{}@") {
		return t.OptErr("url", "the host must be fixed (no placeholders, no user info), got %q", host)
	}
	if _, err := url.Parse("http://" + host + "/"); err != nil {
		return t.OptErr("url", "bad host %q: %v", host, err)
	}
	return s.splitTemplate(t, raw)
}

func (s *HTTPSpec) splitTemplate(t *Table, raw string) error {
	seen := map[int]bool{}
	inQuery := false
	for rest := raw; rest != ""; {
		open := strings.IndexAny(rest, "{}")
		if open < 0 {
			s.Parts = append(s.Parts, URLPart{Lit: rest, Col: -1})
			break
		}
		if rest[open] == '}' {
			return t.OptErr("url", "unbalanced } in %q", raw)
		}
		lit := rest[:open]
		inQuery = inQuery || strings.Contains(lit, "?")
		s.Parts = append(s.Parts, URLPart{Lit: lit, Col: -1})
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 {
			return t.OptErr("url", "unclosed { in %q", raw)
		}
		name := strings.TrimSpace(rest[open+1 : open+end])
		col := columnIndex(t, name)
		if col < 0 {
			return t.OptErr("url", "placeholder {%s} is not a column of %s", name, t.Name)
		}
		s.Parts = append(s.Parts, URLPart{Col: col, Query: inQuery})
		if !seen[col] {
			seen[col] = true
			s.KeyCols = append(s.KeyCols, col)
		}
		rest = rest[open+end+1:]
	}
	if len(s.KeyCols) == 0 {
		return t.OptErr("url", "needs at least one {column} placeholder to look rows up by, got %q", raw)
	}
	return nil
}

func columnIndex(t *Table, name string) int {
	for i, c := range t.Columns {
		if c.Name == name {
			return i
		}
	}
	for i, c := range t.Columns {
		if strings.EqualFold(c.Name, name) {
			return i
		}
	}
	return -1
}

func firstCol(t *Table) string {
	if len(t.Columns) == 0 {
		return "id"
	}
	return t.Columns[0].Name
}

// BuildURL fills the template with the key values (one per KeyCols entry);
// ok is false when a key is NULL (such a row matches nothing). Values are
// escaped, so they cannot change the host.
func (s *HTTPSpec) BuildURL(keys []types.Value) (u string, ok bool) {
	var b strings.Builder
	for _, p := range s.Parts {
		if p.Col < 0 {
			b.WriteString(p.Lit)
			continue
		}
		v := keys[s.keyIndex(p.Col)]
		if v.IsNull() {
			return "", false
		}
		if p.Query {
			b.WriteString(url.QueryEscape(v.String()))
		} else {
			b.WriteString(url.PathEscape(v.String()))
		}
	}
	return b.String(), true
}

func (s *HTTPSpec) keyIndex(col int) int {
	for i, c := range s.KeyCols {
		if c == col {
			return i
		}
	}
	return 0
}

// DecodeJSON decodes a response body, one JSON object, into a row of the
// table's columns: fields match columns by name (case-insensitively), a
// missing field or null is NULL.
func DecodeJSON(t *Table, body []byte) (types.Row, error) {
	r := &jsonlReader{&lineReader{t: t}}
	return r.parse(string(body))
}
