package server

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// conn is one client connection: its protocol state, prepared statements
// and portals, and the cancel hook of its running statement.
type conn struct {
	s      *Server
	nc     net.Conn
	be     *pgproto3.Backend
	cs     *connState
	pid    uint32
	secret []byte
	ctx    context.Context // cancelled when the connection closes
	stop   context.CancelFunc

	mu         sync.Mutex
	cancelStmt context.CancelFunc

	// rd sees whether the client closed the stream: a decoder's io.EOF
	// without it is a malformed message.
	rd *eofReader

	stmts   map[string]*prepared
	portals map[string]*portal
	// failed skips extended-protocol messages until the next Sync after
	// an error, as PostgreSQL does.
	failed bool
}

func newConn(s *Server, nc net.Conn, pid uint32) *conn {
	secret := make([]byte, 4)
	_, _ = rand.Read(secret)
	ctx, stop := context.WithCancel(context.Background())
	return &conn{s: s, nc: nc, pid: pid, secret: secret, ctx: ctx, stop: stop, cs: newConnState(int32(pid)),
		stmts: map[string]*prepared{}, portals: map[string]*portal{}}
}

func (c *conn) keyMatches(key []byte) bool { return subtle.ConstantTimeCompare(key, c.secret) == 1 }

// cancelStatement stops the running statement (a CancelRequest).
func (c *conn) cancelStatement() {
	c.mu.Lock()
	cancel := c.cancelStmt
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// statementContext is the context of one statement, cancelled by a
// CancelRequest or the connection's end.
func (c *conn) statementContext() (context.Context, func()) {
	ctx, cancel := context.WithCancel(c.ctx)
	c.mu.Lock()
	c.cancelStmt = cancel
	c.mu.Unlock()
	return ctx, func() {
		c.mu.Lock()
		c.cancelStmt = nil
		c.mu.Unlock()
		cancel()
	}
}

// close ends the connection (server shutdown).
func (c *conn) close() {
	c.stop()
	c.nc.Close()
}

// startupTimeout bounds the start-up exchange (TLS, password), so a
// client that connects and says nothing does not hold a connection.
const startupTimeout = 30 * time.Second

// errCancelRequest ends a connection that only carried a CancelRequest.
var errCancelRequest = errors.New("cancel request")

// serve runs the connection to its end; a protocol error ends it with one
// log line and never touches another connection or job.
func (c *conn) serve() {
	defer c.close()
	defer func() {
		if r := recover(); r != nil {
			c.s.log.Printf("connection %d from %s: internal error: %v (connection closed)", c.pid, c.nc.RemoteAddr(), r)
		}
	}()
	if err := c.startup(); err != nil {
		if !errors.Is(err, errCancelRequest) && !errors.Is(err, io.EOF) {
			c.s.log.Printf("connection %d from %s: startup: %v", c.pid, c.nc.RemoteAddr(), err)
		}
		return
	}
	for {
		msg, err := c.be.Receive()
		if err != nil {
			if errors.Is(err, io.EOF) && !c.rd.eof {
				err = fmt.Errorf("malformed message: %w", err)
			} else if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return // the client went away
			}
			if !errors.Is(err, net.ErrClosed) && c.ctx.Err() == nil {
				c.s.log.Printf("connection %d from %s: %v (connection closed)", c.pid, c.nc.RemoteAddr(), err)
			}
			return
		}
		if _, ok := msg.(*pgproto3.Terminate); ok {
			return
		}
		if err := c.handle(msg); err != nil {
			if c.ctx.Err() == nil {
				c.s.log.Printf("connection %d from %s: %v (connection closed)", c.pid, c.nc.RemoteAddr(), err)
			}
			return
		}
	}
}

// startup runs the start-up exchange: TLS if asked and offered, the
// password if the server has one, then the session's parameters.
func (c *conn) startup() error {
	_ = c.nc.SetDeadline(time.Now().Add(startupTimeout))
	defer func() { _ = c.nc.SetReadDeadline(time.Time{}) }()
	c.rd = &eofReader{r: c.nc}
	c.be = pgproto3.NewBackend(c.rd, c.nc)
	c.be.SetMaxBodyLen(c.s.cfg.MaxMessageBytes)
	for {
		msg, err := c.be.ReceiveStartupMessage()
		if err != nil {
			return err
		}
		switch m := msg.(type) {
		case *pgproto3.SSLRequest:
			if c.s.cfg.TLS == nil {
				if _, err := c.nc.Write([]byte{'N'}); err != nil {
					return err
				}
				continue
			}
			if _, err := c.nc.Write([]byte{'S'}); err != nil {
				return err
			}
			tc := tls.Server(c.nc, c.s.cfg.TLS)
			if err := tc.HandshakeContext(c.ctx); err != nil {
				return fmt.Errorf("tls: %w", err)
			}
			c.nc, c.rd = tc, &eofReader{r: tc}
			c.be = pgproto3.NewBackend(c.rd, tc)
			c.be.SetMaxBodyLen(c.s.cfg.MaxMessageBytes)
		case *pgproto3.GSSEncRequest:
			if _, err := c.nc.Write([]byte{'N'}); err != nil {
				return err
			}
		case *pgproto3.CancelRequest:
			c.s.cancel(m.ProcessID, m.SecretKey)
			return errCancelRequest
		case *pgproto3.StartupMessage:
			return c.authenticate(m)
		default:
			return fmt.Errorf("unexpected start-up message %T", msg)
		}
	}
}

// authenticate checks the password (when the server has one) and sends
// the session's parameters and cancel key.
func (c *conn) authenticate(m *pgproto3.StartupMessage) error {
	if app := m.Parameters["application_name"]; app != "" {
		c.cs.set("application_name", app)
	}
	if pw := c.s.cfg.Password; pw != "" {
		if err := scramAuth(c.be, pw); err != nil {
			c.be.Send(&pgproto3.ErrorResponse{Severity: "FATAL", SeverityUnlocalized: "FATAL", Code: "28P01",
				Message: fmt.Sprintf("password authentication failed for user %q", m.Parameters["user"])})
			_ = c.be.Flush()
			return err
		}
	}
	c.be.Send(&pgproto3.AuthenticationOk{})
	for _, k := range []string{"server_version", "server_encoding", "client_encoding", "DateStyle", "TimeZone",
		"integer_datetimes", "standard_conforming_strings", "IntervalStyle", "application_name", "is_superuser",
		"session_authorization", "in_hot_standby"} {
		v, _ := c.cs.get(k)
		c.be.Send(&pgproto3.ParameterStatus{Name: k, Value: v})
	}
	if a := c.s.cfg.AttachAddr; a != "" {
		c.be.Send(&pgproto3.ParameterStatus{Name: "clink_attach", Value: a})
	}
	c.be.Send(&pgproto3.BackendKeyData{ProcessID: c.pid, SecretKey: c.secret})
	c.be.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
	return c.be.Flush()
}

// handle answers one message; an error it returns ends the connection.
func (c *conn) handle(msg pgproto3.FrontendMessage) error {
	if q, ok := msg.(*pgproto3.Query); ok {
		c.failed = false
		return c.simpleQuery(q.String)
	}
	if _, ok := msg.(*pgproto3.Sync); ok {
		c.failed = false
		c.be.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
		return c.flush()
	}
	if c.failed {
		return nil
	}
	var err error
	switch m := msg.(type) {
	case *pgproto3.Parse:
		err = c.parse(m)
	case *pgproto3.Bind:
		err = c.bind(m)
	case *pgproto3.Describe:
		err = c.describe(m)
	case *pgproto3.Execute:
		err = c.execute(m)
	case *pgproto3.Close:
		if m.ObjectType == 'S' {
			delete(c.stmts, m.Name)
		} else {
			delete(c.portals, m.Name)
		}
		c.be.Send(&pgproto3.CloseComplete{})
	case *pgproto3.Flush:
		return c.flush()
	default:
		return fmt.Errorf("unsupported message %T", msg)
	}
	var se *stmtError
	if errors.As(err, &se) {
		c.failed = true
		c.be.Send(se.resp)
		return nil
	}
	return err
}

// stmtError is a statement's error for the client (the connection goes
// on); any other error of a handler ends the connection.
type stmtError struct{ resp *pgproto3.ErrorResponse }

func (e *stmtError) Error() string { return e.resp.Message }

// simpleQuery runs a Query message: each statement in turn, stopping at
// the first error, then ReadyForQuery.
func (c *conn) simpleQuery(q string) error {
	pieces := splitStatements(q)
	if len(pieces) == 0 {
		c.be.Send(&pgproto3.EmptyQueryResponse{})
	}
	for _, p := range pieces {
		ctx, done := c.statementContext()
		r, err := c.s.core.exec(ctx, c.cs, p.text)
		if err == nil {
			err = c.sendResult(ctx, r, nil, true)
		}
		done()
		if err != nil {
			var werr *writeError
			if errors.As(err, &werr) {
				return werr.err
			}
			c.be.Send(errorResponse(err, q, p.off))
			break
		}
	}
	c.be.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
	return c.flush()
}

// writeError is a failed write to the client: it ends the connection.
type writeError struct{ err error }

func (e *writeError) Error() string { return "write: " + e.err.Error() }

// flush writes buffered messages, wrapping a failure as a writeError; a
// client that stops reading fails it after Config.WriteTimeout.
func (c *conn) flush() error {
	_ = c.nc.SetWriteDeadline(time.Now().Add(c.s.cfg.WriteTimeout))
	if err := c.be.Flush(); err != nil {
		return &writeError{err}
	}
	return nil
}

// oneStatement trims a statement's trailing semicolon (extended protocol).
func oneStatement(q string) (string, error) {
	ps := splitStatements(q)
	switch len(ps) {
	case 0:
		return "", nil
	case 1:
		return ps[0].text, nil
	}
	return "", errors.New("cannot insert multiple commands into a prepared statement")
}

// lower is strings.ToLower (short for the matchers).
func lower(s string) string { return strings.ToLower(s) }

// eofReader records whether its reader reached the end of the stream,
// and serves bytes a watcher read ahead (unread) first.
type eofReader struct {
	r       io.Reader
	eof     bool
	pending []byte
}

func (e *eofReader) Read(p []byte) (int, error) {
	if len(e.pending) > 0 {
		n := copy(p, e.pending)
		e.pending = e.pending[n:]
		return n, nil
	}
	n, err := e.r.Read(p)
	if errors.Is(err, io.EOF) {
		e.eof = true
	}
	return n, err
}

// watchClient notices, while a SUBSCRIBE streams and nothing else reads
// the connection, that the client went away or sent something (a
// Terminate): cancel is called then. stop ends the watch and puts back
// what it read, for the next Receive; gone reports a closed connection.
func (c *conn) watchClient(cancel context.CancelFunc) (stop func() (gone bool)) {
	var (
		wg   sync.WaitGroup
		got  []byte
		rerr error
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		buf := make([]byte, 1)
		n, err := c.nc.Read(buf)
		got, rerr = buf[:n], err
		var ne net.Error
		if n > 0 || err != nil && !(errors.As(err, &ne) && ne.Timeout()) {
			cancel()
		}
	}()
	return func() bool {
		_ = c.nc.SetReadDeadline(time.Now())
		wg.Wait()
		_ = c.nc.SetReadDeadline(time.Time{})
		c.rd.pending = append(c.rd.pending, got...)
		var ne net.Error
		return len(got) == 0 && rerr != nil && !(errors.As(rerr, &ne) && ne.Timeout())
	}
}
