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

	"clink/sql/ops"
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

var _ = ops.HTTPResponse{}
