package session_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"clink/sql/session"
)

// userService is the test's lookup service on 127.0.0.1: /users/{id}
// answers per id; calls counts requests per id; inFlight tracks overlap.
type userService struct {
	srv      *httptest.Server
	mu       sync.Mutex
	calls    map[string]int
	inFlight atomic.Int64
	peak     atomic.Int64
	// failFirst makes the first n requests of an id answer 503.
	failFirst map[string]int
	// delay per id.
	delay map[string]time.Duration
	// always503 answers 503 to everything.
	always503 atomic.Bool
}

func newUserService(t *testing.T) *userService {
	t.Helper()
	u := &userService{calls: map[string]int{}, failFirst: map[string]int{}, delay: map[string]time.Duration{}}
	u.srv = httptest.NewServer(http.HandlerFunc(u.serve))
	if !strings.HasPrefix(u.srv.URL, "http://127.0.0.1:") {
		t.Fatalf("test server not on 127.0.0.1: %s", u.srv.URL)
	}
	t.Cleanup(u.srv.Close)
	return u
}

func (u *userService) serve(w http.ResponseWriter, r *http.Request) {
	n := u.inFlight.Add(1)
	defer u.inFlight.Add(-1)
	for p := u.peak.Load(); n > p && !u.peak.CompareAndSwap(p, n); p = u.peak.Load() {
	}
	id, ok := strings.CutPrefix(r.URL.Path, "/users/")
	u.mu.Lock()
	u.calls[id]++
	call, fail, d := u.calls[id], u.failFirst[id], u.delay[id]
	u.mu.Unlock()
	time.Sleep(d)
	switch {
	case !ok:
		w.WriteHeader(http.StatusBadRequest)
	case u.always503.Load() || call <= fail:
		w.WriteHeader(http.StatusServiceUnavailable)
	case id == "1":
		fmt.Fprint(w, `{"id": 1, "name": "ann", "tier": 3}`)
	case id == "2":
		fmt.Fprint(w, `{"name": "bob"}`) // id filled from the key, tier NULL
	case id == "4":
		fmt.Fprint(w, `{"id": 4, "tier": 1}`)
	case strings.HasPrefix(id, "s"):
		fmt.Fprintf(w, `{"name": %q}`, "slow-"+id)
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

// set configures an id (under the lock: the server runs on its own
// goroutines, and requests through io_uring carry no happens-before edge).
func (u *userService) set(id string, failFirst int, delay time.Duration) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.failFirst[id], u.delay[id] = failFirst, delay
}

func (u *userService) count(id string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.calls[id]
}

func (u *userService) ddl(opts string) string {
	if opts != "" {
		opts = ", " + opts
	}
	return fmt.Sprintf(`CREATE TABLE users (id BIGINT, name VARCHAR, tier INT) WITH (connector = 'http', url = '%s/users/{id}'%s);`, u.srv.URL, opts)
}

// runLookup runs script (DDL and INSERTs) and then query, threaded, and
// returns the sorted rendered rows.
func runLookup(t *testing.T, cfg session.Config, script, query string) ([]string, *session.Handle, error) {
	t.Helper()
	s, err := session.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := s.Exec(ctx, script); err != nil {
		t.Fatal(err)
	}
	h, err := s.Query(ctx, query)
	if err != nil {
		return nil, nil, err
	}
	t.Cleanup(func() { _ = h.Close() })
	if err := h.Wait(ctx); err != nil {
		return nil, h, err
	}
	var out []string
	for _, r := range h.Table() {
		var cells []string
		for _, v := range r {
			cells = append(cells, v.String())
		}
		out = append(out, strings.Join(cells, " | "))
	}
	sort.Strings(out)
	return out, h, nil
}

const ordersDDL = `CREATE TABLE orders (oid INT, user_id BIGINT) WITH (connector = 'values');
INSERT INTO orders VALUES (10, 1), (11, 2), (12, 3), (13, 4), (14, NULL), (15, 1);`

func TestLookupJoinInnerAndLeft(t *testing.T) {
	for _, par := range []int{1, 3} {
		for _, ordered := range []string{"true", "false"} {
			t.Run(fmt.Sprintf("p%d/ordered=%s", par, ordered), func(t *testing.T) {
				u := newUserService(t)
				script := ordersDDL + u.ddl("ordered = '"+ordered+"'")
				got, _, err := runLookup(t, session.Config{Parallelism: par}, script,
					`SELECT o.oid, u.id, u.name, u.tier FROM orders o JOIN users u ON o.user_id = u.id`)
				if err != nil {
					t.Fatal(err)
				}
				want := []string{"10 | 1 | ann | 3", "11 | 2 | bob | NULL", "13 | 4 | NULL | 1", "15 | 1 | ann | 3"}
				assertRows(t, got, want)
				got, _, err = runLookup(t, session.Config{Parallelism: par}, script,
					`SELECT o.oid, u.name FROM orders o LEFT JOIN users u ON u.id = o.user_id AND u.tier > 1`)
				if err != nil {
					t.Fatal(err)
				}
				want = []string{"10 | ann", "11 | NULL", "12 | NULL", "13 | NULL", "14 | NULL", "15 | ann"}
				assertRows(t, got, want)
				if n := u.count(""); n != 0 {
					t.Errorf("a NULL key was looked up %d times", n)
				}
			})
		}
	}
}

func assertRows(t *testing.T, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestLookupJoinOverlapsSlowResponses(t *testing.T) {
	u := newUserService(t)
	var rows []string
	for i := 1; i <= 8; i++ {
		id := fmt.Sprintf("s%d", i)
		u.set(id, 0, 150*time.Millisecond)
		rows = append(rows, fmt.Sprintf("(%d, '%s')", i, id))
	}
	script := `CREATE TABLE orders (oid INT, uid VARCHAR) WITH (connector = 'values');
INSERT INTO orders VALUES ` + strings.Join(rows, ", ") + ";\n" +
		strings.Replace(u.ddl("max_concurrency = 8"), "id BIGINT", "id VARCHAR", 1)
	start := time.Now()
	got, _, err := runLookup(t, session.Config{Parallelism: 1}, script, `SELECT o.oid, u.name FROM orders o JOIN users u ON o.uid = u.id`)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 8 || got[0] != "1 | slow-s1" {
		t.Fatalf("rows %v", got)
	}
	if el := time.Since(start); el > 8*150*time.Millisecond/2 {
		t.Errorf("8 lookups of 150 ms took %s: not overlapped", el)
	}
	if p := u.peak.Load(); p < 4 {
		t.Errorf("server saw at most %d requests at once, want >= 4", p)
	}
}

func TestLookupJoinRetriesServerErrors(t *testing.T) {
	u := newUserService(t)
	u.set("1", 2, 0)
	u.set("2", 2, 0)
	script := `CREATE TABLE orders (oid INT, user_id BIGINT) WITH (connector = 'values');
INSERT INTO orders VALUES (10, 1), (11, 2);` + u.ddl("retry.max_attempts = 3, retry.initial_backoff = '1ms'")
	got, _, err := runLookup(t, session.Config{Parallelism: 2}, script, `SELECT o.oid, u.name FROM orders o JOIN users u ON o.user_id = u.id`)
	if err != nil {
		t.Fatal(err)
	}
	assertRows(t, got, []string{"10 | ann", "11 | bob"})
	if u.count("1") != 3 || u.count("2") != 3 {
		t.Errorf("requests: id 1 %d, id 2 %d; want 3 each (two 503s, then 200)", u.count("1"), u.count("2"))
	}
}

func TestLookupJoinFailurePolicies(t *testing.T) {
	q := `SELECT o.oid, u.name FROM orders o JOIN users u ON o.user_id = u.id`
	for _, tc := range []struct {
		policy string
		want   []string
		err    string
	}{
		{"fail", nil, "status 503"},
		{"null", []string{"10 | NULL", "11 | NULL"}, ""},
		{"drop", nil, ""},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			u := newUserService(t)
			u.always503.Store(true)
			script := `CREATE TABLE orders (oid INT, user_id BIGINT) WITH (connector = 'values');
INSERT INTO orders VALUES (10, 1), (11, 2);` + u.ddl("retry.max_attempts = 2, retry.initial_backoff = '1ms', on_failure = '"+tc.policy+"'")
			got, _, err := runLookup(t, session.Config{Parallelism: 1}, script, q)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			assertRows(t, got, tc.want)
			if u.count("1") != 2 || u.count("2") != 2 {
				t.Errorf("requests %d, %d; want 2 attempts each", u.count("1"), u.count("2"))
			}
		})
	}
}

func TestLookupJoinBreakerOpens(t *testing.T) {
	u := newUserService(t)
	u.always503.Store(true)
	script := `CREATE TABLE orders (oid INT, user_id BIGINT) WITH (connector = 'values');
INSERT INTO orders VALUES (10, 1), (11, 2), (12, 3), (13, 4), (14, 5), (15, 6);` +
		u.ddl("max_concurrency = 1, breaker.failure_threshold = 2, breaker.cooldown = '1h', on_failure = 'null'")
	got, _, err := runLookup(t, session.Config{Parallelism: 1}, script, `SELECT o.oid, u.name FROM orders o LEFT JOIN users u ON o.user_id = u.id`)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 6 {
		t.Fatalf("rows %v", got)
	}
	total := 0
	for i := 1; i <= 6; i++ {
		total += u.count(fmt.Sprint(i))
	}
	if total != 2 {
		t.Errorf("server saw %d requests; the breaker should open after 2 failures", total)
	}
}

func TestLookupJoinRetractions(t *testing.T) {
	u := newUserService(t)
	script := ordersDDL + u.ddl("")
	_, h, err := runLookup(t, session.Config{Parallelism: 2}, script,
		`SELECT c.user_id, c.n, u.name FROM (SELECT user_id, COUNT(*) AS n FROM orders GROUP BY user_id) c JOIN users u ON c.user_id = u.id`)
	if err != nil {
		t.Fatal(err)
	}
	var log []string
	for _, c := range h.Changes() {
		log = append(log, c.String())
	}
	text := strings.Join(log, "\n")
	if !strings.Contains(text, "-U[1, 1, ann]") || !strings.Contains(text, "+U[1, 2, ann]") {
		t.Errorf("changelog lacks the enriched retraction of user 1:\n%s", text)
	}
	var table []string
	for _, r := range h.Table() {
		table = append(table, fmt.Sprint(r))
	}
	sort.Strings(table)
	if got := strings.Join(table, ";"); got != "1\t2\tann;2\t1\tbob;4\t1\tNULL" {
		t.Errorf("table %s", got)
	}
}

func TestLookupErrors(t *testing.T) {
	s, err := session.New(session.Config{Parallelism: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.Exec(ctx, `CREATE TABLE orders (oid INT, user_id BIGINT);
CREATE TABLE users (id BIGINT, name VARCHAR) WITH (connector = 'http', url = 'http://127.0.0.1:1/users/{id}');`); err != nil {
		t.Fatal(err)
	}
	ddl := func(opts string) string {
		return "CREATE TABLE bad (id BIGINT, name VARCHAR) WITH (connector = 'http'" + opts + ")"
	}
	for _, tc := range []struct{ sql, want string }{
		{ddl(""), "error at 1:1: table bad: connector http needs a url option"},
		{ddl(", url = 'https://x/{id}'"), "error at 1:70: table bad: option url: https is not supported"},
		{ddl(", url = 'ftp://x/{id}'"), "option url: want an http:// URL"},
		{ddl(", url = 'http://{id}.evil/x'"), "option url: the host must be fixed"},
		{ddl(", url = 'http://127.0.0.1:1/users'"), "needs at least one {column} placeholder"},
		{ddl(", url = 'http://127.0.0.1:1/{nope}'"), "placeholder {nope} is not a column of bad"},
		{ddl(", url = 'http://127.0.0.1:1/{id'"), "unclosed {"},
		{ddl(", url = 'http://h/{id}', timeout = 'soon'"), "option timeout: want a duration"},
		{ddl(", url = 'http://h/{id}', on_failure = 'retry'"), "option on_failure: want fail, null or drop"},
		{ddl(", url = 'http://h/{id}', max_concurrency = 0"), "option max_concurrency: want 1 to 4096"},
		{ddl(", url = 'http://h/{id}', retry.max_attempts = 'x'"), "option retry.max_attempts: want an integer"},
		{ddl(", url = 'http://h/{id}', format = 'csv'"), "option format: only 'json'"},
		{ddl(", url = 'http://h/{id}', retries = 3"), "option retries: unknown option for connector http"},
		{ddl(", url = 'http://h/{id}', adaptive = 'pid'"), "option adaptive: want off, latency or ready_fill"},
		{ddl(", url = 'http://h/{id}', adaptive = 'latency'"), "option adaptive: needs adaptive.setpoint"},
		{ddl(", url = 'http://h/{id}', adaptive = 'latency', adaptive.setpoint = '0.5'"), "option adaptive.setpoint: want a latency"},
		{ddl(", url = 'http://h/{id}', adaptive = 'ready_fill', adaptive.setpoint = '2'"), "option adaptive.setpoint: want a fraction"},
		{ddl(", url = 'http://h/{id}', max_concurrency = 4, adaptive = 'latency', adaptive.setpoint = '5ms', adaptive.min = 5"), "option adaptive.min: want 1 to max_concurrency (4)"},
		{ddl(", url = 'http://h/{id}', adaptive.setpoint = '5ms'"), "option adaptive.setpoint: needs adaptive = 'latency' or 'ready_fill'"},
		{"SELECT * FROM users", "error at 1:15: table users (connector http) is a lookup table and cannot be scanned"},
		{"SELECT * FROM users u JOIN orders o ON o.user_id = u.id", "lookup table users must be on the right side"},
		{"SELECT * FROM orders o RIGHT JOIN users u ON o.user_id = u.id", "must be an INNER or LEFT join"},
		{"SELECT * FROM orders o JOIN users u ON o.oid < u.id", "needs an equality on its URL key column id"},
		{"SELECT * FROM orders o JOIN users u USING (id)", "needs ON equalities, not USING"},
		{"SELECT * FROM orders WHERE user_id IN (SELECT id FROM users)", "cannot be scanned"},
	} {
		_, err := s.Exec(ctx, tc.sql)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s:\n got %v\nwant %q", tc.sql, err, tc.want)
		}
	}
}

func TestLookupExplain(t *testing.T) {
	s, err := session.New(session.Config{Parallelism: 2})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	res, err := s.Exec(ctx, `CREATE TABLE orders (oid INT, user_id BIGINT);
CREATE TABLE users (id BIGINT, name VARCHAR) WITH (connector = 'http', url = 'http://127.0.0.1:1/users/{id}',
  max_concurrency = 4, ordered = false, retry.max_attempts = 3, breaker.failure_threshold = 2, timeout = '250ms',
  adaptive = 'latency', adaptive.setpoint = '20ms', adaptive.min = 2);
EXPLAIN SELECT o.oid, u.name FROM orders o JOIN users u ON o.user_id = u.id`)
	if err != nil {
		t.Fatal(err)
	}
	out := res[len(res)-1].String()
	for _, want := range []string{"LookupJoin", "(o.user_id = u.id)", "hash <- scan:orders#0", "async (external lookups)",
		"INNER lookup users: GET http://127.0.0.1:1/users/{id}", "unordered, max_concurrency 4 per subtask, timeout 250ms",
		"retry 3 attempts (backoff 50ms x2, max 30s)", "breaker after 2 failures (cooldown 30s)", "on_failure fail",
		"adaptive cap 2..4 toward 20ms mean latency"} {
		if !strings.Contains(out, want) {
			t.Errorf("EXPLAIN lacks %q:\n%s", want, out)
		}
	}
}

func TestLookupJoinCommaAndChained(t *testing.T) {
	u := newUserService(t)
	script := ordersDDL + u.ddl("") + `
CREATE TABLE tiers (tier INT, label VARCHAR) WITH (connector = 'http', url = '` + u.srv.URL + `/users/{tier}');`
	got, _, err := runLookup(t, session.Config{Parallelism: 2}, script,
		`SELECT o.oid, u.name, t.tier FROM orders o JOIN users u ON o.user_id = u.id LEFT JOIN tiers t ON t.tier = u.tier`)
	if err != nil {
		t.Fatal(err)
	}
	// tier 3 -> /users/3 is a 404; tier 1 -> /users/1, whose "tier" field (3) wins over the key.
	assertRows(t, got, []string{"10 | ann | NULL", "11 | bob | NULL", "13 | NULL | 3", "15 | ann | NULL"})
	got, _, err = runLookup(t, session.Config{Parallelism: 2}, script,
		`SELECT o.oid, u.name FROM orders o, users u WHERE o.user_id = u.id AND u.tier > 1`)
	if err != nil {
		t.Fatal(err)
	}
	assertRows(t, got, []string{"10 | ann", "15 | ann"})
}

// TestLookupJoinAdaptiveCap: with adaptive = 'latency', a service slower
// than the setpoint drives the lookup subtask's in-flight cap from
// max_concurrency down toward adaptive.min; without it the cap stays.
func TestLookupJoinAdaptiveCap(t *testing.T) {
	for _, tc := range []struct {
		opts    string
		adapted bool
	}{
		{"max_concurrency = 16", false},
		{"max_concurrency = 16, adaptive = 'latency', adaptive.setpoint = '1ms', adaptive.min = 2", true},
	} {
		t.Run(tc.opts, func(t *testing.T) {
			u := newUserService(t)
			var rows []string
			for i := 1; i <= 120; i++ { // 160 ms at a cap of 16: past the first 100 ms adaptation
				id := fmt.Sprintf("s%d", i)
				u.set(id, 0, 20*time.Millisecond)
				rows = append(rows, fmt.Sprintf("(%d, '%s')", i, id))
			}
			script := `CREATE TABLE orders (oid INT, uid VARCHAR) WITH (connector = 'values');
INSERT INTO orders VALUES ` + strings.Join(rows, ", ") + ";\n" +
				strings.Replace(u.ddl(tc.opts), "id BIGINT", "id VARCHAR", 1)
			got, h, err := runLookup(t, session.Config{Parallelism: 1}, script, `SELECT o.oid, u.name FROM orders o JOIN users u ON o.uid = u.id`)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 120 {
				t.Fatalf("%d rows, want 120", len(got))
			}
			var caps []int64
			for _, s := range h.Job().Snapshot().Subtasks {
				if strings.HasPrefix(s.Stage, "lookup:") {
					caps = append(caps, s.Gate.MaxInFlight)
				}
			}
			if len(caps) != 1 {
				t.Fatalf("lookup subtask caps %v, want one", caps)
			}
			if moved := caps[0] < 16; moved != tc.adapted || caps[0] < 2 {
				t.Errorf("final cap %d (max_concurrency 16, adaptive.min 2), adapted = %v", caps[0], tc.adapted)
			}
		})
	}
}
