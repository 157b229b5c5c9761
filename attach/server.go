package attach

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"clink/engine"
	"clink/engine/event"
	"clink/tui"
)

// Control is what the attach server reads from and asks of a job: a
// tui.SQLRuntime over the job's handle is one (its own event tap unused:
// each attached client gets its own tap of Job.Bus).
type Control interface {
	Snapshot() engine.JobSnapshot
	Results(n int) []string
	Info() tui.Info
	Checkpoint() (string, error)
	CrashAndRestore() (string, error)
}

// Job is one attachable job.
type Job struct {
	Name    string
	Control Control
	// Bus is the job's runtime event bus, tapped once per attached
	// event stream (nil: the stream carries no events).
	Bus *event.Bus
	// NoCrash, when set, refuses the crash action with this reason (a job
	// whose results already left the process cannot be rewound).
	NoCrash string
}

// Provider lists the attachable jobs; the server asks it on every request,
// so jobs may come and go.
type Provider interface {
	Jobs() []Job
}

// Jobs is a concurrency-safe Provider that jobs add themselves to.
type Jobs struct {
	mu   sync.Mutex
	jobs []Job
}

// Add lists j until the returned remove is called.
func (s *Jobs) Add(j Job) (remove func()) {
	s.mu.Lock()
	s.jobs = append(s.jobs, j)
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.jobs = slices.DeleteFunc(s.jobs, func(x Job) bool { return x.Name == j.Name })
	}
}

// Jobs lists the jobs in the order they were added.
func (s *Jobs) Jobs() []Job {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.jobs)
}

// maxResults bounds the result rows a snapshot carries.
const maxResults = 200

// Handler serves the attach protocol under /attach/ for p's jobs.
func Handler(p Provider) http.Handler {
	h := &handler{p: p, feed: tui.DefaultFeedConfig}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /attach/jobs", h.jobs)
	mux.HandleFunc("GET /attach/snapshot", h.snapshot)
	mux.HandleFunc("GET /attach/events", h.events)
	mux.HandleFunc("/attach/checkpoint", h.action(func(j Job) (string, error) { return j.Control.Checkpoint() }))
	mux.HandleFunc("/attach/crash", h.action(crash))
	mux.HandleFunc("/attach/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, fmt.Errorf("attach: no endpoint %s %s (GET jobs, snapshot, events; POST checkpoint, crash)", r.Method, r.URL.Path))
	})
	return mux
}

type handler struct {
	p    Provider
	feed tui.FeedConfig
}

func crash(j Job) (string, error) {
	if j.NoCrash != "" {
		return "", fmt.Errorf("job %s cannot crash and restore: %s", j.Name, j.NoCrash)
	}
	return j.Control.CrashAndRestore()
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v) // the client left: nothing to tell
}

func writeError(w http.ResponseWriter, code int, err error) {
	writeJSON(w, code, Action{Error: err.Error()})
}

// job finds the request's ?job=NAME, answering 400 / 404 when it cannot.
func (h *handler) job(w http.ResponseWriter, r *http.Request) (Job, bool) {
	name := r.URL.Query().Get("job")
	jobs := h.p.Jobs()
	if name == "" {
		writeError(w, http.StatusBadRequest, fmt.Errorf("attach: %s needs ?job=NAME", r.URL.Path))
		return Job{}, false
	}
	names := make([]string, 0, len(jobs))
	for _, j := range jobs {
		if j.Name == name && j.Control == nil {
			writeError(w, http.StatusInternalServerError, fmt.Errorf("attach: job %q has no Control to read", name))
			return Job{}, false
		}
		if j.Name == name {
			return j, true
		}
		names = append(names, j.Name)
	}
	writeError(w, http.StatusNotFound, fmt.Errorf("attach: no job named %q (running: %s)", name, orNone(names)))
	return Job{}, false
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

func (h *handler) jobs(w http.ResponseWriter, _ *http.Request) {
	out := []JobInfo{}
	for _, j := range h.p.Jobs() {
		ji := JobInfo{Name: j.Name}
		if j.Control != nil { // a job without one is listed, and refused on attach
			in := j.Control.Info()
			ji.Query, ji.StateURI, ji.Finished = in.Query, in.StateURI, j.Control.Snapshot().Finished
		}
		out = append(out, ji)
	}
	writeJSON(w, http.StatusOK, out)
}

func (h *handler) snapshot(w http.ResponseWriter, r *http.Request) {
	j, ok := h.job(w, r)
	if !ok {
		return
	}
	n := maxResults
	if s := r.URL.Query().Get("results"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 0 {
			writeError(w, http.StatusBadRequest, fmt.Errorf("attach: results=%q: want a count >= 0", s))
			return
		}
		n = min(v, maxResults)
	}
	s := toWire(j.Control.Snapshot())
	s.Info, s.Results = j.Control.Info(), j.Control.Results(n)
	if t, ok := j.Control.(tui.ResultTable); ok {
		s.Columns, s.Rows = t.ResultTable(n)
	}
	writeJSON(w, http.StatusOK, s)
}

func (h *handler) action(f func(Job) (string, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			writeError(w, http.StatusMethodNotAllowed, fmt.Errorf("attach: %s takes POST, not %s", r.URL.Path, r.Method))
			return
		}
		j, ok := h.job(w, r)
		if !ok {
			return
		}
		text, err := f(j)
		if err != nil {
			writeJSON(w, http.StatusConflict, Action{Text: text, Error: err.Error()})
			return
		}
		writeJSON(w, http.StatusOK, Action{Text: text})
	}
}

// events streams the job's events, tapped as the local dashboard taps
// them (tui.DefaultFeedConfig; ?tap=full for every event), until the
// client leaves or the server closes.
func (h *handler) events(w http.ResponseWriter, r *http.Request) {
	j, ok := h.job(w, r)
	if !ok {
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusInternalServerError, fmt.Errorf("attach: the connection cannot stream"))
		return
	}
	cfg := h.feed
	if r.URL.Query().Get("tap") == "full" {
		cfg = tui.FeedConfig{Buffer: 1 << 15}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fmt.Fprintf(w, ": attached to %s, sampling %s\n\n", j.Name, sampling(j, cfg))
	fl.Flush()
	if j.Bus == nil {
		<-r.Context().Done()
		return
	}
	feed := tui.NewFeed(j.Bus, cfg)
	defer feed.Close()
	streamEvents(w, fl, r, feed.Events())
}

func sampling(j Job, cfg tui.FeedConfig) string {
	if j.Bus == nil {
		return "no event bus"
	}
	if cfg.Off <= 0 {
		return "every event"
	}
	return fmt.Sprintf("%s of every %s", cfg.On, cfg.On+cfg.Off)
}

// streamEvents writes events as they come, flushing after each burst,
// until the request's context ends or a write fails.
func streamEvents(w http.ResponseWriter, fl http.Flusher, r *http.Request, ch <-chan event.Event) {
	enc := json.NewEncoder(w)
	for {
		select {
		case <-r.Context().Done():
			return
		case e := <-ch:
			if !writeEvent(w, enc, e) {
				return
			}
		}
		for more := true; more; {
			select {
			case e := <-ch:
				if !writeEvent(w, enc, e) {
					return
				}
			default:
				more = false
			}
		}
		fl.Flush()
	}
}

func writeEvent(w http.ResponseWriter, enc *json.Encoder, e event.Event) bool {
	if _, err := fmt.Fprint(w, "data: "); err != nil {
		return false
	}
	if err := enc.Encode(eventToWire(e)); err != nil { // Encode ends the line
		return false
	}
	_, err := fmt.Fprint(w, "\n")
	return err == nil
}
