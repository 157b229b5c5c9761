package server

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	_ "clink/state/pools" // disagg-file://
)

// testServer is a server running in process on 127.0.0.1 with a free
// port, and what it logged.
type testServer struct {
	*Server
	addr   string
	port   string
	logBuf *syncBuffer
	served chan error
}

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startServer starts a server on cfg (memory:// and a 100ms checkpoint
// interval unless set); the test's cleanup closes it.
func startServer(t *testing.T, cfg Config) *testServer {
	t.Helper()
	if cfg.StateURI == "" {
		cfg.StateURI = "memory://"
	}
	if cfg.CheckpointInterval == 0 {
		cfg.CheckpointInterval = 100 * time.Millisecond
	}
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	if cfg.Parallelism == 0 {
		cfg.Parallelism = 2
	}
	buf := &syncBuffer{}
	cfg.Log = log.New(buf, "", 0)
	srv, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ln, err := srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{Server: srv, addr: ln.Addr().String(), logBuf: buf, served: make(chan error, 1)}
	_, ts.port, _ = net.SplitHostPort(ts.addr)
	go func() { ts.served <- srv.Serve(ln) }()
	t.Cleanup(func() { ts.stop(t) })
	return ts
}

// stop closes the server (a final checkpoint of every job) once.
func (ts *testServer) stop(t *testing.T) {
	t.Helper()
	if ts.served == nil {
		return
	}
	if err := ts.Close(context.Background()); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := <-ts.served; err != nil {
		t.Errorf("Serve: %v", err)
	}
	ts.served = nil
}

// psql runs the psql client against the server with the script on stdin.
func psql(t *testing.T, port, script string, extra ...string) (stdout, stderr string, err error) {
	t.Helper()
	args := append([]string{"-X", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", port, "-U", "clink", "-d", "clink"}, extra...)
	cmd := exec.Command("psql", args...)
	cmd.Stdin = strings.NewReader(script)
	cmd.Env = append(os.Environ(), "PGCONNECT_TIMEOUT=20", "PGSSLMODE=disable")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	return out.String(), errb.String(), err
}

// connect opens a pgx connection to the server.
func connect(t *testing.T, addr string, extra string) *pgx.Conn {
	t.Helper()
	host, port, _ := net.SplitHostPort(addr)
	dsn := fmt.Sprintf("postgres://clink@%s:%s/clink?sslmode=disable%s", host, port, extra)
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatalf("pgx connect: %v", err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// writeCSV writes a csv file of n rows "k,v" with k = i % keys and v = i.
func writeCSV(t *testing.T, dir string, n, keys int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("k,v\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%d,%d\n", i%keys, i)
	}
	path := filepath.Join(dir, "bids.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// wantTotals is the GROUP BY of writeCSV's rows: k, count, sum per key.
func wantTotals(n, keys int) [][3]int64 {
	out := make([][3]int64, keys)
	for k := range out {
		out[k][0] = int64(k)
	}
	for i := 1; i <= n; i++ {
		out[i%keys][1]++
		out[i%keys][2] += int64(i)
	}
	return out
}

// waitJobState polls SHOW JOBS until job id reaches state (a finished
// bounded view), failing on a failed job.
func waitJobState(t *testing.T, conn *pgx.Conn, id int, state string) {
	t.Helper()
	for {
		var st string
		var errText *string
		rows, err := conn.Query(context.Background(), "SHOW JOBS", pgx.QueryExecModeSimpleProtocol)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for rows.Next() {
			vals, err := rows.Values()
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(vals[0]) == fmt.Sprint(id) {
				found = true
				st = vals[4].(string)
				if vals[10] != nil {
					s := vals[10].(string)
					errText = &s
				}
			}
		}
		rows.Close()
		if !found {
			t.Fatalf("job %d not in SHOW JOBS", id)
		}
		if st == state {
			return
		}
		if st == "failed" {
			t.Fatalf("job %d failed: %v", id, *errText)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// totals reads the totals view in key order.
func totals(t *testing.T, conn *pgx.Conn, sql string, args ...any) [][3]int64 {
	t.Helper()
	rows, err := conn.Query(context.Background(), sql, args...)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	var out [][3]int64
	for rows.Next() {
		var r [3]int64
		if err := rows.Scan(&r[0], &r[1], &r[2]); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return out
}
