package server

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// rawStartup opens a connection and completes the start-up exchange.
func rawStartup(t *testing.T, addr string) (net.Conn, *pgproto3.Frontend) {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	fe := pgproto3.NewFrontend(nc, nc)
	fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber, Parameters: map[string]string{"user": "clink"}})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	for {
		msg, err := fe.Receive()
		if err != nil {
			t.Fatalf("start-up: %v", err)
		}
		if _, ok := msg.(*pgproto3.ReadyForQuery); ok {
			return nc, fe
		}
	}
}

// closedByServer reads until the server closes the connection.
func closedByServer(t *testing.T, nc net.Conn) {
	t.Helper()
	if _, err := io.Copy(io.Discard, nc); err != nil && !strings.Contains(err.Error(), "reset") {
		t.Fatalf("reading until the server closes: %v", err)
	}
}

// TestHostileInput: a 1 GiB length prefix, a malformed message, a bad
// start-up packet and a client that disconnects mid-result each end
// their own connection with one log line; the server, another client
// and its running view's job are untouched.
func TestHostileInput(t *testing.T) {
	ts, conn := subscribeSetup(t)
	ctx := context.Background()
	if _, err := conn.Exec(ctx, `CREATE TABLE big (id BIGINT) WITH (connector='datagen', rows='300000')`); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		send func(t *testing.T) net.Conn
		log  string
	}{
		{"1 GiB length prefix", func(t *testing.T) net.Conn {
			nc, _ := rawStartup(t, ts.addr)
			msg := binary.BigEndian.AppendUint32([]byte{'Q'}, 1<<30)
			nc.Write(msg)
			return nc
		}, "invalid body length"},
		{"malformed Parse", func(t *testing.T) net.Conn {
			nc, _ := rawStartup(t, ts.addr)
			nc.Write([]byte{'P', 0, 0, 0, 6, 'x', 'y'}) // no terminating NULs
			return nc
		}, "connection"},
		{"unknown message type", func(t *testing.T) net.Conn {
			nc, _ := rawStartup(t, ts.addr)
			nc.Write([]byte{'!', 0, 0, 0, 4})
			return nc
		}, "connection"},
		{"bad start-up packet", func(t *testing.T) net.Conn {
			nc, err := net.Dial("tcp", ts.addr)
			if err != nil {
				t.Fatal(err)
			}
			nc.Write([]byte{0, 0, 0, 8, 0, 9, 9, 9})
			return nc
		}, "startup"},
		{"disconnect mid-result", func(t *testing.T) net.Conn {
			nc, fe := rawStartup(t, ts.addr)
			fe.Send(&pgproto3.Query{String: "SELECT id, id * 2 AS twice, 'some padding to fill the socket buffers' AS pad FROM big"})
			fe.Flush()
			if _, err := fe.Receive(); err != nil { // the RowDescription: the result is being sent
				t.Fatal(err)
			}
			nc.(*net.TCPConn).SetLinger(0)
			nc.Close()
			return nil
		}, "write"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := strings.Count(ts.logBuf.String(), "\n")
			nc := tc.send(t)
			if nc != nil {
				closedByServer(t, nc)
			}
			for ts.openConnections() > 1 {
				time.Sleep(time.Millisecond) // the hostile connection's goroutine is still ending
			}
			logged := strings.Split(strings.TrimSpace(ts.logBuf.String()), "\n")[before:]
			if len(logged) != 1 || !strings.Contains(logged[0], tc.log) {
				t.Fatalf("log lines = %q, want one mentioning %q (whole log:\n%s)", logged, tc.log, ts.logBuf.String())
			}
			var n int
			if err := conn.QueryRow(ctx, "SELECT COUNT(*) FROM sums").Scan(&n); err != nil || n != 2 {
				t.Fatalf("the other client after it: %d rows, %v", n, err)
			}
		})
	}
	if _, err := conn.Exec(ctx, "INSERT INTO t VALUES (5, 5)"); err != nil {
		t.Fatal(err)
	}
	for {
		var n int
		if err := conn.QueryRow(ctx, "SELECT COUNT(*) FROM sums").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 3 {
			break // the view's job still follows its input
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// openConnections counts the server's connections.
func (s *Server) openConnections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// TestClientStopsReading: a client that stops reading mid-result has its
// connection closed once a write makes no progress for WriteTimeout; the
// server goes on.
func TestClientStopsReading(t *testing.T) {
	ts := startServer(t, Config{WriteTimeout: 200 * time.Millisecond})
	conn := connect(t, ts.addr, "")
	ctx := context.Background()
	if _, err := conn.Exec(ctx, `CREATE TABLE big (id BIGINT) WITH (connector='datagen', rows='300000')`); err != nil {
		t.Fatal(err)
	}
	before := strings.Count(ts.logBuf.String(), "\n")
	nc, fe := rawStartup(t, ts.addr)
	nc.(*net.TCPConn).SetReadBuffer(4096)
	fe.Send(&pgproto3.Query{String: "SELECT id, 'padding padding padding padding padding' AS pad FROM big"})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	for ts.openConnections() > 1 {
		time.Sleep(5 * time.Millisecond)
	}
	if logged := strings.Split(strings.TrimSpace(ts.logBuf.String()), "\n")[before:]; len(logged) != 1 || !strings.Contains(logged[0], "i/o timeout") {
		t.Fatalf("log = %q, want one line about the write timing out", logged)
	}
	var one int
	if err := conn.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("the other client: %v", err)
	}
}
