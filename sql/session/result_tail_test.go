package session_test

import (
	"context"
	"errors"
	"io"
	"testing"

	"clink/sql/ops"
	"clink/sql/session"
)

// TestResultKeepsBoundedTail counts what a query's handle holds after
// 5000 changes: the tail never exceeds Config.ResultTail, a reader that
// falls behind skips to the oldest kept change and counts what it missed,
// and QueryOptions drop the tail or the table where no view needs them.
func TestResultKeepsBoundedTail(t *testing.T) {
	tests := []struct {
		name               string
		tail               int
		o                  session.QueryOptions
		wantKept, wantRows int
	}{
		{"default view", 100, session.QueryOptions{}, 100, 5000},
		{"final: no tail", 100, session.QueryOptions{NoTail: true}, 0, 5000},
		{"stream: nothing kept", 100, session.QueryOptions{NoTail: true, NoTable: true}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := session.New(session.Config{Parallelism: 2, ResultTail: tt.tail})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Exec(context.Background(), "CREATE TABLE ev (k BIGINT) WITH (connector = 'datagen', rows = '5000');"); err != nil {
				t.Fatal(err)
			}
			streamed := 0
			tt.o.OnChange = func(ops.Change) error { streamed++; return nil }
			h, err := s.QueryWith(context.Background(), "SELECT k FROM ev", tt.o)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			if err := h.Wait(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got := len(h.Changes()); got != tt.wantKept {
				t.Errorf("the handle keeps %d changes, want %d", got, tt.wantKept)
			}
			if got := len(h.Table()); got != tt.wantRows {
				t.Errorf("the table holds %d rows, want %d", got, tt.wantRows)
			}
			if streamed != 5000 || h.Len() != 5000 {
				t.Errorf("OnChange saw %d changes, the sink %d; want 5000", streamed, h.Len())
			}
			read := 0
			for {
				_, err := h.Next(context.Background())
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				read++
			}
			if read != tt.wantKept || h.Skipped() != int64(5000-tt.wantKept) {
				t.Errorf("Next read %d and skipped %d, want %d and %d", read, h.Skipped(), tt.wantKept, 5000-tt.wantKept)
			}
		})
	}
}
