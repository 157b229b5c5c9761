// Package server is `clink serve`: a long-running clink that PostgreSQL
// clients (psql, pgx, JDBC, BI tools) connect to over the wire protocol.
// It keeps one SQL session (the catalog), runs materialised views and
// INSERT jobs in the background, persists the catalog on a durable state
// URI and restores every job from its last checkpoint on start. The
// engine and the state tier know nothing of it. See docs/serve.md.
package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"sync"
	"time"

	"clink/engine/event"
	"clink/sql/session"
)

// DefaultListen is the address clink serve binds when none is given.
const DefaultListen = "127.0.0.1:4566"

// DefaultWriteTimeout is how long a write to a client that stopped
// reading may block before its connection is closed.
const DefaultWriteTimeout = time.Minute

// DefaultMaxMessageBytes bounds one protocol message from a client; a
// longer one ends the connection.
const DefaultMaxMessageBytes = 64 << 20

// Config configures a server.
type Config struct {
	// StateURI is where the catalog and the jobs' checkpoints live
	// (disagg-file://DIR: durable; memory://: nothing survives).
	StateURI string
	// Listen is the address to bind (DefaultListen when empty). Any
	// address but loopback needs Password.
	Listen string
	// Password, when set, is required of every client (SCRAM-SHA-256).
	Password string
	// TLS, when set, is offered to clients that ask for it (sslmode).
	TLS *tls.Config
	// CheckpointInterval checkpoints every job this often; views publish
	// their contents at each checkpoint's barrier. Must be positive.
	CheckpointInterval time.Duration
	// MaxOutage fails a job whose checkpoints keep failing this long (0: never).
	MaxOutage time.Duration
	// Parallelism of keyed operators (0: number of CPUs).
	Parallelism int
	// BaseDir resolves relative file paths of csv / jsonl tables.
	BaseDir string
	// MaxMessageBytes bounds a client message (DefaultMaxMessageBytes when 0).
	MaxMessageBytes int
	// WriteTimeout ends a connection whose client stopped reading: a
	// write that makes no progress for this long fails
	// (DefaultWriteTimeout when 0).
	WriteTimeout time.Duration
	// Log receives one line per notable event (nil: discarded).
	Log *log.Logger
	// Bus, when set, receives every job's runtime events (the metrics'
	// read-latency histogram and attached dashboards tap it).
	Bus *event.Bus
	// OnJob, when set, is told of every job whose query started (created
	// or restored); the done it returns is called once when the job stops
	// (DROP MATERIALIZED VIEW, CANCEL JOB or the server's Close).
	OnJob func(JobStart) (done func())
	// AttachAddr, when set, is where `clink tui --attach` watches this
	// server's jobs (the --metrics listener); every connection is told it
	// as the ParameterStatus clink_attach, so `clink repl --connect` can
	// open the attached dashboard over a running view.
	AttachAddr string
}

// JobStart is a started job as Config.OnJob sees it.
type JobStart struct {
	// ID is the job's id in SHOW JOBS.
	ID int
	// Name labels the job: a view's name, or "job<ID>" for an INSERT.
	Name string
	// Handle is the job's running query.
	Handle *session.Handle
	// Session is the server's session configuration (its bus included).
	Session session.Config
}

// Server accepts PostgreSQL connections and runs their statements.
type Server struct {
	cfg  Config
	core *core
	log  *log.Logger

	mu      sync.Mutex
	ln      net.Listener
	conns   map[uint32]*conn
	nextPID uint32
	closed  bool
	wg      sync.WaitGroup // connection goroutines
}

// New checks the configuration, opens the state URI and restores the
// persisted catalog and jobs. Nothing listens until Serve.
func New(cfg Config) (*Server, error) {
	if cfg.Listen == "" {
		cfg.Listen = DefaultListen
	}
	if cfg.MaxMessageBytes <= 0 {
		cfg.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = DefaultWriteTimeout
	}
	if cfg.CheckpointInterval <= 0 {
		return nil, errors.New("serve: the checkpoint interval must be positive (views publish their contents at checkpoints)")
	}
	if err := CheckListen(cfg.Listen, cfg.Password != ""); err != nil {
		return nil, err
	}
	logger := cfg.Log
	if logger == nil {
		logger = log.New(io.Discard, "", 0)
	}
	c, err := newCore(cfg, logger)
	if err != nil {
		return nil, err
	}
	return &Server{cfg: cfg, core: c, log: logger, conns: map[uint32]*conn{}}, nil
}

// CheckListen refuses a non-loopback listen address without a password:
// anyone who can reach the port could run SQL that reads local files.
func CheckListen(addr string, hasPassword bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("serve: --listen %q: %w", addr, err)
	}
	if hasPassword || host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("serve: --listen %s is not a loopback address: set a password with --password-file FILE or the CLINK_PASSWORD environment variable (clients then authenticate with SCRAM-SHA-256)", addr)
}

// Listen binds the configured address.
func (s *Server) Listen() (net.Listener, error) {
	ln, err := net.Listen("tcp", s.cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("serve: listen: %w", err)
	}
	return ln, nil
}

// Serve accepts connections on ln until Close; it returns nil once Close
// was called (also when Close came first: ln is closed then).
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ln.Close()
		return nil
	}
	s.ln = ln
	s.mu.Unlock()
	for {
		nc, err := ln.Accept()
		if err != nil {
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if closed {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return fmt.Errorf("serve: accept: %w", err)
		}
		c, ok := s.register(nc)
		if !ok {
			nc.Close()
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer s.unregister(c)
			c.serve()
		}()
	}
}

// register gives a connection its process id and cancel key.
func (s *Server) register(nc net.Conn) (*conn, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, false
	}
	s.nextPID++
	c := newConn(s, nc, s.nextPID)
	s.conns[c.pid] = c
	return c, true
}

func (s *Server) unregister(c *conn) {
	s.mu.Lock()
	delete(s.conns, c.pid)
	s.mu.Unlock()
}

// cancel stops the running statement of connection pid if the key matches.
func (s *Server) cancel(pid uint32, key []byte) {
	s.mu.Lock()
	c := s.conns[pid]
	s.mu.Unlock()
	if c != nil && c.keyMatches(key) {
		c.cancelStatement()
	}
}

// Close stops accepting, ends every connection, takes a final checkpoint
// of every running job and stops them. ctx bounds the checkpoints.
func (s *Server) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	ln := s.ln
	conns := make([]*conn, 0, len(s.conns))
	for _, c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	if ln != nil {
		ln.Close()
	}
	for _, c := range conns {
		c.close()
	}
	s.wg.Wait()
	return s.core.close(ctx)
}
