package repl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"

	"clink/sql/ast"
)

// Remote is the REPL against a running clink serve (clink repl
// --connect): statements go to the server over the PostgreSQL wire
// protocol (pgx, the simple query protocol, one statement at a time) and
// their results print with the shell's table printer; a SUBSCRIBE or a
// COPY (SUBSCRIBE ...) TO STDOUT prints its changes as they arrive, until
// it is cancelled (Ctrl-C, or q on a terminal). Errors render with the
// server's position as a caret, as the local shell's do. It is not safe
// for concurrent use, except Cancel.
type Remote struct {
	conn *pgx.Conn
	out  io.Writer
	opts Options
	// timing prints each statement's duration (\timing).
	timing bool

	mu     sync.Mutex
	cancel context.CancelFunc // the running statement's (Cancel)
	// dashJob is the view whose attached dashboard t asked for during a
	// SUBSCRIBE; it opens once the stream stopped.
	dashJob string
}

// ConnectURL turns --connect's argument into a PostgreSQL URL:
// postgres://... as it is, host:port as postgres://clink@host:port/clink.
// A password comes from PGPASSWORD (never the command line); sslmode
// from the URL or PGSSLMODE, else prefer.
func ConnectURL(addr string) (string, error) {
	if strings.HasPrefix(addr, "postgres://") || strings.HasPrefix(addr, "postgresql://") {
		return addr, nil
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" {
		return "", fmt.Errorf("--connect %q: want postgres://HOST:PORT[/DB] or HOST:PORT", addr)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return "postgres://clink@" + net.JoinHostPort(host, port) + "/clink", nil
}

// Connect opens a remote shell on the server at addr (ConnectURL).
func Connect(ctx context.Context, addr string, opts Options, out io.Writer) (*Remote, error) {
	url, err := ConnectURL(addr)
	if err != nil {
		return nil, err
	}
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("--connect: %w", err)
	}
	r := &Remote{out: out, opts: opts}
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
		fmt.Fprintf(r.out, "%s: %s\n", n.Severity, n.Message)
	}
	// A cancelled statement is cancelled on the server (CancelRequest),
	// and the connection goes on.
	cfg.BuildContextWatcherHandler = func(pc *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: pc, DeadlineDelay: 10 * time.Second}
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = 10 * time.Second
	}
	if r.conn, err = pgx.ConnectConfig(ctx, cfg); err != nil {
		return nil, fmt.Errorf("connect to %s: %w", addr, err)
	}
	return r, nil
}

// Close ends the connection.
func (r *Remote) Close() error { return r.conn.Close(context.Background()) }

// Cancel cancels the running statement, if any (safe from any goroutine:
// a SIGINT handler).
func (r *Remote) Cancel() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cancel != nil {
		r.cancel()
	}
}

// Run runs a script of statements and backslash commands, stopping at the
// first error (a statement cancelled by Cancel is not one: its error is
// printed and the script goes on).
func (r *Remote) Run(ctx context.Context, src string) error {
	for _, chunk := range SplitCommands(src) {
		if chunk.Command {
			if err := r.command(ctx, chunk.Text); err != nil {
				return &ScriptError{Src: src, Offset: chunk.Offset, Err: err, Command: true}
			}
			continue
		}
		for _, st := range splitSQL(chunk.Text) {
			start := time.Now()
			err := r.statement(ctx, st.text)
			var pgErr *pgconn.PgError
			if errors.As(err, &pgErr) && pgErr.Code == "57014" && ctx.Err() == nil {
				fmt.Fprintln(r.out, "ERROR: "+pgErr.Message)
				continue
			}
			if err != nil {
				return remoteError(src, chunk.Offset+st.off, st.text, err)
			}
			if r.timing {
				fmt.Fprintf(r.out, "Time: %.3f ms\n", float64(time.Since(start).Microseconds())/1000)
			}
		}
	}
	return nil
}

// stmtText is one statement of a chunk and its byte offset there.
type stmtText struct {
	text string
	off  int
}

// splitSQL splits SQL text at top-level semicolons (outside strings,
// quoted names and comments), dropping blank statements.
func splitSQL(src string) []stmtText {
	var out []stmtText
	start := 0
	add := func(end int) {
		text := src[start:end]
		if Blank(text) {
			return
		}
		lead := len(text) - len(strings.TrimLeft(text, " \t\r\n"))
		out = append(out, stmtText{text: strings.TrimRight(text[lead:], " \t\r\n"), off: start + lead})
	}
	for _, t := range scan(src) {
		if t.kind == tokPunct && src[t.start] == ';' {
			add(t.start)
			start = t.end
		}
	}
	add(len(src))
	return out
}

// statement runs one statement and prints its results. A SUBSCRIBE that
// t stopped (watchKeys) opens the attached dashboard over its view's job.
func (r *Remote) statement(ctx context.Context, sql string) error {
	err := r.stream(ctx, sql)
	r.mu.Lock()
	job := r.dashJob
	r.dashJob = ""
	r.mu.Unlock()
	if job == "" || ctx.Err() != nil {
		return err
	}
	fmt.Fprintf(r.out, "-- SUBSCRIBE stopped: the dashboard watches %s's job on the server (q comes back here)\n", job)
	return r.openAttached(ctx, job)
}

// stream runs one statement and prints its results as they arrive. A
// statement stopped before the server saw it ends as the server's cancel
// would (57014), so the script goes on either way.
func (r *Remote) stream(parent context.Context, sql string) (err error) {
	ctx, cancel := context.WithCancel(parent)
	r.mu.Lock()
	r.cancel = cancel
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.cancel = nil
		r.mu.Unlock()
		cancel()
	}()
	defer func() {
		var pgErr *pgconn.PgError
		if err != nil && ctx.Err() != nil && parent.Err() == nil && !errors.As(err, &pgErr) {
			err = &pgconn.PgError{Severity: "ERROR", Code: "57014", Message: "canceling statement due to user request"}
		}
	}()
	stopSig := cancelOnInterrupt(cancel)
	defer stopSig()
	if isCopySubscribe(sql) || isSubscribe(sql) {
		stopKeys := r.watchKeys(ctx, cancel, subscribedView(sql)) // a streaming statement runs until stopped
		defer stopKeys()
	}
	if isCopySubscribe(sql) {
		tag, err := r.conn.PgConn().CopyTo(ctx, r.out, sql)
		if err == nil {
			fmt.Fprintln(r.out, tag.String())
		}
		return err
	}
	mrr := r.conn.PgConn().Exec(ctx, sql)
	for mrr.NextResult() {
		if err := r.printResult(mrr.ResultReader(), isSubscribe(sql)); err != nil {
			_ = mrr.Close()
			return err
		}
	}
	return mrr.Close()
}

// watchKeys cancels the statement on Ctrl-C or q while it runs, when the
// shell reads single keys (a terminal); t cancels it too and asks for the
// attached dashboard over view's job, when the server has an attach
// address and the shell a dashboard (else t does nothing).
func (r *Remote) watchKeys(ctx context.Context, cancel context.CancelFunc, view string) (stop func()) {
	if r.opts.Keys == nil || !r.opts.Live {
		return func() {}
	}
	canAttach := view != "" && r.opts.Attach != nil && r.attachAddr() != ""
	kctx, kcancel := context.WithCancel(ctx)
	keys, wait := r.opts.Keys(kctx)
	done, ended := make(chan struct{}), make(chan struct{})
	var resending sync.WaitGroup
	stopStatement := func() {
		cancel()
		resending.Add(1)
		go func() {
			defer resending.Done()
			r.resendCancel(ended)
		}()
	}
	go func() {
		defer close(done)
		stopped := false
		for k := range keys {
			switch {
			case stopped:
			case k == 3 || k == 'q':
				stopStatement()
				stopped = true
			case (k == 't' || k == 'T') && canAttach:
				r.mu.Lock()
				r.dashJob = view
				r.mu.Unlock()
				stopStatement()
				stopped = true
			}
		}
	}()
	return func() {
		close(ended)
		kcancel()
		wait()
		<-done
		resending.Wait()
	}
}

// cancelResend is how often a stopped statement's cancel is sent again
// until it ends: a CancelRequest that reaches the server before the
// statement has started there is lost, as in PostgreSQL.
const cancelResend = 500 * time.Millisecond

// resendCancel sends the statement's cancel again every cancelResend
// until ended is closed.
func (r *Remote) resendCancel(ended <-chan struct{}) {
	t := time.NewTicker(cancelResend)
	defer t.Stop()
	for {
		select {
		case <-ended:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), cancelResend)
			_ = r.conn.PgConn().CancelRequest(ctx)
			cancel()
		}
	}
}

// cancelOnInterrupt calls cancel on SIGINT until stop is called (Ctrl-C
// on a terminal not in raw mode, or kill -INT of a piped script).
func cancelOnInterrupt(cancel context.CancelFunc) (stop func()) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt)
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		select {
		case <-sigs:
			cancel()
		case <-done:
		}
	}()
	return func() {
		signal.Stop(sigs)
		close(done)
		<-stopped
	}
}

// isSubscribe reports whether sql is a SUBSCRIBE (its rows stream).
func isSubscribe(sql string) bool {
	f := strings.Fields(strings.ToUpper(sql))
	return len(f) > 0 && f[0] == "SUBSCRIBE"
}

// isCopySubscribe reports whether sql is COPY (SUBSCRIBE ...) TO STDOUT.
func isCopySubscribe(sql string) bool {
	u := strings.ToUpper(strings.Join(strings.Fields(sql), " "))
	return strings.HasPrefix(u, "COPY (") || strings.HasPrefix(u, "COPY(")
}

// remoteError places a server error in the script: its Position (a
// character of the statement) as the caret, its detail and hint after.
func remoteError(src string, off int, stmt string, err error) error {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return &ScriptError{Src: src, Offset: off, Stmt: stmt, Err: err}
	}
	msg := pgErr.Message
	if pgErr.Detail != "" {
		msg += "\nDETAIL:  " + pgErr.Detail
	}
	if pgErr.Hint != "" {
		msg += "\nHINT:  " + pgErr.Hint
	}
	if pgErr.Position <= 0 {
		return &ScriptError{Src: src, Offset: off, Stmt: stmt, Err: errors.New(msg)}
	}
	b := byteOffset(stmt, int(pgErr.Position)-1)
	pos := offsetPos(stmt, b)
	return &ScriptError{Src: src, Offset: off, Stmt: stmt, Err: &ast.Error{Pos: pos, Msg: msg}}
}

// byteOffset is the byte offset of character n of s.
func byteOffset(s string, n int) int {
	i := 0
	for off := range s {
		if i == n {
			return off
		}
		i++
	}
	return len(s)
}
