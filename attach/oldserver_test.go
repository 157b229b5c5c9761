package attach

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestOlderServerResultsAsLines: a server that predates result columns
// (its snapshot has only "results") still attaches; the runtime offers no
// table, so the dashboard shows the lines as before.
func TestOlderServerResultsAsLines(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/attach/snapshot", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"subtasks":[],"checkpoints":[],"finished":false,"info":{},"results":["+I 1000 | 3"]}`))
	})
	mux.HandleFunc("/attach/events", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		<-r.Context().Done()
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	c, err := NewClient(strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rt, err := c.Attach(t.Context(), "old", RuntimeConfig{Every: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if cols, rows := rt.ResultTable(10); cols != nil || rows != nil {
		t.Errorf("older server: ResultTable = %v, %v; want none", cols, rows)
	}
	if got := rt.Results(10); len(got) != 1 || got[0] != "+I 1000 | 3" {
		t.Errorf("older server: Results = %q", got)
	}
}
