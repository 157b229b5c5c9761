package server

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
)

// TestPortalSuspended: Execute with a row limit (JDBC's fetch size) sends
// that many rows and PortalSuspended; the next Execute goes on.
func TestPortalSuspended(t *testing.T) {
	ts := startServer(t, Config{})
	_, fe := rawStartup(t, ts.addr)
	fe.Send(&pgproto3.Parse{Query: "SELECT x FROM (VALUES (1), (2), (3), (4), (5)) AS v(x) ORDER BY x"})
	fe.Send(&pgproto3.Bind{})
	fe.Send(&pgproto3.Execute{MaxRows: 2})
	fe.Send(&pgproto3.Execute{MaxRows: 2})
	fe.Send(&pgproto3.Execute{MaxRows: 2})
	fe.Send(&pgproto3.Sync{})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		msg, err := fe.Receive()
		if err != nil {
			t.Fatal(err)
		}
		switch m := msg.(type) {
		case *pgproto3.DataRow:
			got = append(got, string(m.Values[0]))
		case *pgproto3.PortalSuspended:
			got = append(got, "suspended")
		case *pgproto3.CommandComplete:
			got = append(got, string(m.CommandTag))
		case *pgproto3.ErrorResponse:
			t.Fatalf("error: %s", m.Message)
		case *pgproto3.ReadyForQuery:
			want := "ParseComplete BindComplete 1 2 suspended 3 4 suspended 5 SELECT 1"
			if g := strings.Join(got, " "); g != want {
				t.Fatalf("got %s, want %s", g, want)
			}
			return
		default:
			got = append(got, fmt.Sprintf("%T", m)[len("*pgproto3."):])
		}
	}
}
