package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"clink/server"
	"clink/sql/session"
)

// serveReaders is how many pgx clients hammer the view while its job runs.
const serveReaders = 50

// serveKeys is how many rows (groups) the suite's views have.
const serveKeys = 1000

// serveGoal is the goal of the job's throughput with the readers against
// without them (issue 22).
const serveGoal = 0.9

// serveTable is a bounded generator: k a sequence 0, 1, ..., v random.
const serveTable = `CREATE TABLE %s (k BIGINT, v BIGINT) WITH (connector = 'datagen', rows = '%d',
  'fields.k.kind' = 'sequence', 'fields.k.min' = '0', 'fields.v.min' = '0', 'fields.v.max' = '1000')`

// serveView is the materialised view of the suite: serveKeys groups.
const serveView = `CREATE MATERIALIZED VIEW %s AS SELECT k %% %d AS k, COUNT(*) AS n, SUM(v) AS s FROM %s GROUP BY k %% %d`

// servePointRead is the point read of a view, $1 a key.
const servePointRead = `SELECT k, n, s FROM %s WHERE k = $1`

// benchServer is a clink server in process on 127.0.0.1 (an ephemeral
// port) and the handles of the jobs it started, by name.
type benchServer struct {
	*server.Server
	addr   string
	served chan error

	mu      sync.Mutex
	handles map[string]*session.Handle
}

// startServeServer starts a server on memory:// (checkpoints, so views
// publish, every 100ms).
func startServeServer() (*benchServer, error) {
	bs := &benchServer{served: make(chan error, 1), handles: map[string]*session.Handle{}}
	srv, err := server.New(server.Config{StateURI: "memory://", Listen: "127.0.0.1:0",
		CheckpointInterval: 100 * time.Millisecond, Parallelism: 2,
		OnJob: func(js server.JobStart) func() {
			bs.mu.Lock()
			bs.handles[js.Name] = js.Handle
			bs.mu.Unlock()
			return func() {}
		}})
	if err != nil {
		return nil, err
	}
	ln, err := srv.Listen()
	if err != nil {
		_ = srv.Close(context.Background())
		return nil, err
	}
	bs.Server, bs.addr = srv, ln.Addr().String()
	go func() { bs.served <- srv.Serve(ln) }()
	return bs, nil
}

// stop closes the server and waits for Serve to return.
func (bs *benchServer) stop() error {
	err := bs.Close(context.Background())
	return errors.Join(err, <-bs.served)
}

// exec runs statements in process and fails on the first error.
func (bs *benchServer) exec(ctx context.Context, sqls ...string) error {
	for _, s := range sqls {
		if _, _, err := bs.Query(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// runView creates view name over table, calls started (when set) once
// the view exists, waits for its bounded job to end and returns how long
// that took (from the CREATE).
func (bs *benchServer) runView(ctx context.Context, name, table string, started func()) (time.Duration, error) {
	start := time.Now()
	if err := bs.exec(ctx, fmt.Sprintf(serveView, name, serveKeys, table, serveKeys)); err != nil {
		return 0, err
	}
	if started != nil {
		started()
	}
	bs.mu.Lock()
	h := bs.handles[name]
	bs.mu.Unlock()
	if h == nil {
		return 0, fmt.Errorf("view %s: the server reported no job", name)
	}
	if err := h.Wait(ctx); err != nil {
		return 0, fmt.Errorf("view %s: %w", name, err)
	}
	d := time.Since(start)
	if !h.Finished() {
		return 0, fmt.Errorf("view %s: its job stopped before the end of its input", name)
	}
	return d, nil
}

// connect opens a pgx connection to the server.
func (bs *benchServer) connect(ctx context.Context) (*pgx.Conn, error) {
	host, port, _ := net.SplitHostPort(bs.addr)
	return pgx.Connect(ctx, fmt.Sprintf("postgres://clink@%s:%s/clink?sslmode=disable", host, port))
}

// runServe measures clink serve in process on 127.0.0.1: point reads of a
// materialised view per second over the wire (pgx, a prepared SELECT ...
// WHERE k = $1) against the same reads in process (Server.Query, the path
// a connection's statement takes without the protocol), and a view's
// job throughput with 50 pgx readers hammering it against none (goal:
// at least 0.9).
func runServe(ctx context.Context, e *Env) (err error) {
	bs, err := startServeServer()
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	defer func() {
		if serr := bs.stop(); serr != nil && err == nil {
			err = fmt.Errorf("serve: stopping the server: %w", serr)
		}
	}()
	if err := servePointReads(ctx, e, bs); err != nil {
		return fmt.Errorf("serve: point reads: %w", err)
	}
	if err := serveThroughput(ctx, e, bs); err != nil {
		return fmt.Errorf("serve: throughput: %w", err)
	}
	return nil
}
