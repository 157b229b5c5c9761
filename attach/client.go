package attach

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Client talks the attach protocol to one metrics listener.
type Client struct {
	base string // http://HOST:PORT
	hc   *http.Client
}

// NewClient checks addr (HOST:PORT, as given to --metrics) and returns a
// client for it. Nothing is sent until a call.
func NewClient(addr string) (*Client, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host == "" || port == "" {
		return nil, fmt.Errorf("attach address %q: want HOST:PORT of a --metrics listener, e.g. 127.0.0.1:9249", addr)
	}
	return &Client{base: "http://" + net.JoinHostPort(host, port), hc: &http.Client{Transport: &http.Transport{}}}, nil
}

// Close drops the client's idle connections, so that no connection (and
// no goroutine on either side) outlives it.
func (c *Client) Close() { c.hc.CloseIdleConnections() }

// requestTimeout bounds every call but the event stream.
const requestTimeout = 10 * time.Second

// call sends a request and decodes a JSON answer into out; an answer
// with an error field (or a non-2xx status) is an error naming the call.
func (c *Client) call(ctx context.Context, method, path string, q url.Values, out any) error {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	u := c.base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return fmt.Errorf("attach %s %s: %w", method, u, err)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("attach %s %s: %w", method, u, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("attach %s %s: reading the answer: %w", method, u, err)
	}
	if resp.StatusCode/100 != 2 {
		var a Action
		if json.Unmarshal(body, &a) == nil && a.Error != "" {
			return errors.New(a.Error)
		}
		return fmt.Errorf("attach %s %s: %s: %s", method, u, resp.Status, strings.TrimSpace(string(body)))
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("attach %s %s: not an attach answer (is %s a clink --metrics listener?): %w", method, u, c.base, err)
	}
	return nil
}

// Jobs lists the attachable jobs.
func (c *Client) Jobs(ctx context.Context) ([]JobInfo, error) {
	var out []JobInfo
	return out, c.call(ctx, http.MethodGet, "/attach/jobs", nil, &out)
}

// Snapshot reads job's counters, description and up to results rows.
func (c *Client) Snapshot(ctx context.Context, job string, results int) (Snapshot, error) {
	var s Snapshot
	q := url.Values{"job": {job}, "results": {fmt.Sprint(results)}}
	return s, c.call(ctx, http.MethodGet, "/attach/snapshot", q, &s)
}

// Checkpoint asks the job for a checkpoint and waits until it is durable.
func (c *Client) Checkpoint(ctx context.Context, job string) (string, error) {
	return c.act(ctx, "/attach/checkpoint", job)
}

// Crash asks the job to crash and restore from its newest checkpoint.
func (c *Client) Crash(ctx context.Context, job string) (string, error) {
	return c.act(ctx, "/attach/crash", job)
}

func (c *Client) act(ctx context.Context, path, job string) (string, error) {
	var a Action
	if err := c.call(ctx, http.MethodPost, path, url.Values{"job": {job}}, &a); err != nil {
		return "", err
	}
	return a.Text, nil
}

// Stream reads job's event stream, calling f for each event, until ctx
// ends, the server closes the stream or f returns false. full taps every
// event instead of the sampled duty cycle. Events of kinds this client
// does not know are skipped.
func (c *Client) Stream(ctx context.Context, job string, full bool, f func(Event) bool) error {
	q := url.Values{"job": {job}}
	if full {
		q.Set("tap", "full")
	}
	u := c.base + "/attach/events?" + q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("attach events %s: %w", u, err)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("attach events %s: %w", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var a Action
		_ = json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&a)
		return fmt.Errorf("attach events %s: %s: %s", u, resp.Status, a.Error)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue // comments and blank separators
		}
		var e Event
		if err := json.Unmarshal([]byte(data), &e); err != nil {
			return fmt.Errorf("attach events %s: malformed event %.80q: %w", u, data, err)
		}
		if !f(e) {
			return nil
		}
	}
	if err := sc.Err(); err != nil && ctx.Err() == nil {
		return fmt.Errorf("attach events %s: %w", u, err)
	}
	return nil
}
