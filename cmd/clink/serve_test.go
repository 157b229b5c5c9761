package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// serveProc is a `clink serve` process on 127.0.0.1 and its stderr.
type serveProc struct {
	cmd  *exec.Cmd
	port string
	mu   sync.Mutex
	log  strings.Builder
	done chan error
}

// startServe runs the binary's serve on the state directory and waits
// until it listens.
func startServe(t *testing.T, stateDir string, extra ...string) *serveProc {
	t.Helper()
	bin := clinkBinary(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	ln.Close()
	p := &serveProc{port: port, done: make(chan error, 1)}
	args := append([]string{"serve", "--state", "disagg-file://" + stateDir, "--listen", "127.0.0.1:" + port,
		"--checkpoint-interval", "100ms", "--parallelism", "2"}, extra...)
	p.cmd = exec.Command(bin, args...)
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	listening := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		once := sync.Once{}
		for sc.Scan() {
			p.mu.Lock()
			p.log.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
			if strings.Contains(sc.Text(), "listening on") {
				once.Do(func() { close(listening) })
			}
		}
		once.Do(func() { close(listening) })
		p.done <- p.cmd.Wait()
	}()
	<-listening
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	if !strings.Contains(p.stderr(), "listening on") {
		t.Fatalf("clink serve did not start:\n%s", p.stderr())
	}
	return p
}

func (p *serveProc) stderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

// wait returns the process's exit error once it exited.
func (p *serveProc) wait() error { return <-p.done }

func (p *serveProc) connect(t *testing.T) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), "postgres://clink@127.0.0.1:"+p.port+"/clink?sslmode=disable")
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, p.stderr())
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// jobRow is SHOW JOBS' row of job 1: state, records in, last checkpoint.
func jobRow(t *testing.T, conn *pgx.Conn) (state string, in, last int64) {
	t.Helper()
	rows, err := conn.Query(context.Background(), "SHOW JOBS", pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		v, err := rows.Values()
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(v[0]) == "1" {
			if v[4] == "failed" {
				t.Fatalf("job 1 failed: %v", v[10])
			}
			return v[4].(string), v[5].(int64), v[8].(int64)
		}
	}
	t.Fatal("job 1 not in SHOW JOBS")
	return "", 0, 0
}

// viewRows reads a three-column BIGINT view in key order.
func viewRows(t *testing.T, conn *pgx.Conn, view string) [][3]int64 {
	t.Helper()
	rows, err := conn.Query(context.Background(), "SELECT * FROM "+view+" ORDER BY 1")
	if err != nil {
		t.Fatal(err)
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
		t.Fatal(err)
	}
	return out
}

// modGroups is SELECT id % m, COUNT(*), SUM(id) over ids 0..n-1.
func modGroups(n, m int64) [][3]int64 {
	out := make([][3]int64, m)
	for i := int64(0); i < n; i++ {
		out[i%m][0] = i % m
		out[i%m][1]++
		out[i%m][2] += i
	}
	return out
}

// TestServeSIGTERMKeepsRunningView: SIGTERM takes a final checkpoint of
// a running view (over a monitored, so unbounded, csv file) and exits 0;
// the restarted binary restores it from that checkpoint with the same
// contents.
func TestServeSIGTERMKeepsRunningView(t *testing.T) {
	dir := t.TempDir()
	const n, m = 2000, 5
	var b strings.Builder
	b.WriteString("id\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "%d\n", i)
	}
	if err := os.WriteFile(filepath.Join(dir, "ids.csv"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, "state")
	p := startServe(t, state)
	conn := p.connect(t)
	ctx := context.Background()
	for _, sql := range []string{
		fmt.Sprintf(`CREATE TABLE ids (id BIGINT) WITH (connector='csv', path='%s', format='csv', header='true', 'source.monitor-interval'='100ms')`, filepath.Join(dir, "ids.csv")),
		`CREATE MATERIALIZED VIEW groups AS SELECT id % 5 AS g, COUNT(*) AS n, SUM(id) AS s FROM ids GROUP BY id % 5`,
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	waitComplete := func(conn *pgx.Conn) {
		t.Helper()
		var seen int64 = -1
		for {
			st, in, last := jobRow(t, conn)
			if st != "running" {
				t.Fatalf("job 1 is %s, want running (its source is unbounded)", st)
			}
			if in == n && seen < 0 {
				seen = last
			}
			if seen >= 0 && last >= seen+2 { // a barrier after every input row reached the view
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitComplete(conn)
	want := modGroups(n, m)
	if got := viewRows(t, conn, "groups"); !reflect.DeepEqual(got, want) {
		t.Fatalf("view = %v, want %v", got, want)
	}
	conn.Close(ctx)
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p.wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, p.stderr())
	}
	var final int
	for _, line := range strings.Split(p.stderr(), "\n") {
		if i := strings.Index(line, "final checkpoint "); i >= 0 {
			fmt.Sscanf(line[i:], "final checkpoint %d of job 1", &final)
		}
	}
	if final == 0 {
		t.Fatalf("no final checkpoint of job 1 logged:\n%s", p.stderr())
	}

	p2 := startServe(t, state)
	if log, want := p2.stderr(), fmt.Sprintf("restored job 1 materialized view groups from checkpoint %d\n", final); !strings.Contains(log, want) {
		t.Fatalf("restart did not restore the view from its final checkpoint %d:\n%s", final, log)
	}
	conn2 := p2.connect(t)
	_, _, last := jobRow(t, conn2)
	for {
		if _, _, l := jobRow(t, conn2); l > last {
			break // the restored job published at a new barrier
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := viewRows(t, conn2, "groups"); !reflect.DeepEqual(got, want) {
		t.Fatalf("view after restart = %v, want %v", got, want)
	}
}

// TestServeKill9: a server killed with -9 in the middle of a view's job
// and restarted serves the view with exactly the contents an
// uninterrupted run has.
func TestServeKill9(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	const n, m = 5_000_000, 7
	p := startServe(t, state)
	conn := p.connect(t)
	ctx := context.Background()
	for _, sql := range []string{
		fmt.Sprintf(`CREATE TABLE ids (id BIGINT) WITH (connector='datagen', rows='%d', 'fields.id.kind'='sequence', 'fields.id.min'='0')`, n),
		`CREATE MATERIALIZED VIEW groups AS SELECT id % 7 AS g, COUNT(*) AS n, SUM(id) AS s FROM ids GROUP BY id % 7`,
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	for {
		st, _, last := jobRow(t, conn)
		if st == "finished" {
			t.Fatalf("the job finished before its first checkpoint was seen: raise n (%d) so the kill lands mid-run", n)
		}
		if last >= 1 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	var exit *exec.ExitError
	if err := p.wait(); !errors.As(err, &exit) {
		t.Fatalf("kill -9: %v", err)
	}
	p2 := startServe(t, state)
	if log := p2.stderr(); !strings.Contains(log, "restored job 1 materialized view groups from checkpoint") ||
		strings.Contains(log, "from checkpoint 0\n") {
		t.Fatalf("restart did not restore the view mid-run:\n%s", log)
	}
	conn2 := p2.connect(t)
	for {
		if st, _, _ := jobRow(t, conn2); st == "finished" {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got, want := viewRows(t, conn2, "groups"), modGroups(n, m); !reflect.DeepEqual(got, want) {
		t.Fatalf("view after kill -9 and restart = %v, want %v", got, want)
	}
}

// TestServeFlagErrors: bad flags name what is wrong before anything
// listens.
func TestServeFlagErrors(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "") // remote-read:// below must fail before any request
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--listen", "0.0.0.0:0"}, "is not a loopback address: set a password with --password-file FILE or the CLINK_PASSWORD"},
		{[]string{"--listen", "nonsense"}, `--listen "nonsense"`},
		{[]string{"--tls-cert", "c.pem"}, "give both --tls-cert and --tls-key"},
		{[]string{"--password-file", "/nonexistent/pw"}, "--password-file: open /nonexistent/pw"},
		{[]string{"--password-file", empty}, "is empty"},
		{[]string{"--checkpoint-interval", "0s"}, "checkpoint interval must be positive"},
		{[]string{"--state", "s4://x"}, `unknown scheme "s4"`},
		{[]string{"--state", "remote-read://bucket/prefix"}, "no credentials for s3://bucket: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"},
		{[]string{"extra"}, `unexpected argument "extra"`},
		{[]string{"--metrics", "0.0.0.0:0"}, `serve --metrics: metrics address "0.0.0.0:0" listens on 0.0.0.0, not loopback`},
		{[]string{"--metrics", ":0"}, "listens on every interface, not loopback"},
		{[]string{"--metrics-allow-remote"}, "--metrics-allow-remote needs --metrics ADDR"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out, errOut strings.Builder
			err := dispatch(append([]string{"serve"}, tc.args...), &out, &errOut)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// TestServePassword: the password comes from --password-file (its
// trailing newline dropped) or CLINK_PASSWORD, the file winning.
func TestServePassword(t *testing.T) {
	file := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(file, []byte("from file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		file, env, want string
	}{
		{"", "", ""},
		{"", "from env", "from env"},
		{file, "", "from file"},
		{file, "from env", "from file"},
	}
	for _, tc := range cases {
		t.Setenv("CLINK_PASSWORD", tc.env)
		f := serveFlags{passwordFile: tc.file}
		if err := f.resolve(); err != nil || f.cfg.Password != tc.want {
			t.Errorf("file %q env %q: password %q, %v; want %q", tc.file, tc.env, f.cfg.Password, err, tc.want)
		}
	}
}
