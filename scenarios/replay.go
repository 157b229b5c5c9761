package scenarios

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"clink/engine"
	"clink/engine/counter"
	"clink/engine/event"
	"clink/sql/session"
	"clink/state/mempool"

	"github.com/pmezard/go-difflib/difflib"
)

// handler runs one directive and returns its output. An error is printed
// as the directive's output ("error: ..."), except a *ParseError or
// *ArgError, which stop the file: the scenario itself is malformed.
type handler func(r *Replayer, d *Directive, a *args) (string, error)

// handlers is the directive table: one handler per directive, as etcd
// raft's interaction tests have it. Adding a directive is one entry.
var handlers map[string]handler

func init() {
	handlers = map[string]handler{
		"config":     (*Replayer).config,
		"operator":   (*Replayer).operator,
		"insert":     (*Replayer).insert,
		"watermark":  (*Replayer).watermark,
		"run":        (*Replayer).run,
		"checkpoint": (*Replayer).checkpoint,
		"crash":      (*Replayer).crash,
		"restore":    (*Replayer).restore,
		"fault":      (*Replayer).fault,
		"results":    (*Replayer).results,
		"trace":      (*Replayer).traceCmd,
		"state":      (*Replayer).state,
		"sql":        (*Replayer).sql,
		"http":       (*Replayer).httpCmd,
	}
}

// Directives lists the directive names the replayer knows, sorted.
func Directives() []string {
	out := make([]string, 0, len(handlers))
	for n := range handlers {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Replayer runs one scenario's directives in order against one world. It
// is driven from one goroutine; everything it starts runs on a simulated
// executor stepped from that goroutine.
type Replayer struct {
	seed uint64
	w    *world
	sess *session.Session // the SQL session, made on the first `sql`
	sim  *simSwitch       // the SQL session's simulation
	q    *sqlStream       // the streaming query `sql stream` started
	http *fakeHTTP        // the lookup service `http` scripted (httpfake.go)
}

// NewReplayer returns a replayer whose default seed (used unless a
// `config seed=` overrides it) is seed.
func NewReplayer(seed uint64) *Replayer {
	w := &world{
		cfg: defaultConfig(seed), durable: mempool.New(), rules: newKeyRules(), log: &engine.Log[counter.Rec]{},
		sink: newCollector(), bus: event.NewBus(), trace: newTracer(),
	}
	w.bus.Subscribe(w.trace.observe)
	return &Replayer{seed: seed, w: w}
}

// Close tears down the running job, if any.
func (r *Replayer) Close() error {
	if r.q != nil {
		err := r.q.h.Close()
		r.q = nil
		return err
	}
	if r.w.job == nil {
		return nil
	}
	_, err := r.w.crash()
	return err
}

// Exec runs one directive and returns its output (ending in a newline
// unless empty). A malformed directive returns a *ParseError.
func (r *Replayer) Exec(d *Directive) (string, error) {
	h, ok := handlers[d.Cmd]
	if !ok {
		return "", &ParseError{File: d.File, Line: d.Line, Col: d.column(d.Cmd),
			Msg: fmt.Sprintf("unknown directive %q (known: %s)", d.Cmd, strings.Join(Directives(), ", "))}
	}
	a := newArgs(d)
	out, err := h(r, d, a)
	if err == nil {
		err = a.done()
	}
	var ae *ArgError
	if errors.As(err, &ae) {
		return "", &ParseError{File: d.File, Line: d.Line, Col: d.column(ae.Key), Msg: ae.Error()}
	}
	var pe *ParseError
	if errors.As(err, &pe) {
		return "", err
	}
	if err != nil {
		out += "error: " + err.Error() + "\n"
	}
	if out != "" && !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	return out, nil
}

// Mismatch is a directive whose output differs from its expected block.
type Mismatch struct {
	Directive *Directive
	Expected  string
	Actual    string
}

// String renders file:line, the directive and a unified diff.
func (m Mismatch) String() string {
	diff, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: difflib.SplitLines(m.Expected), B: difflib.SplitLines(m.Actual),
		FromFile: "expected", ToFile: "actual", Context: 3,
	})
	if err != nil {
		diff = fmt.Sprintf("(no diff: %v)\n", err)
	}
	return fmt.Sprintf("%s: output of %q differs\n%s", m.Directive.Pos(), m.Directive.Text, diff)
}

// Result is the outcome of replaying one file.
type Result struct {
	File       *File
	Outputs    []string
	Mismatches []Mismatch
}

// RunFile parses and replays the scenario at path with the given default
// seed. With rewrite, the expected blocks are replaced by the actual
// outputs and the file is written back.
func RunFile(path string, seed uint64, rewrite bool) (*Result, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read scenario: %w", err)
	}
	f, err := Parse(path, string(text))
	if err != nil {
		return nil, err
	}
	res, err := Replay(f, seed)
	if err != nil {
		return res, err
	}
	if rewrite {
		if out := f.Render(res.Outputs); out != string(text) {
			if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
				return res, fmt.Errorf("rewrite scenario: %w", err)
			}
		}
		res.Mismatches = nil
	}
	return res, nil
}

// Replay runs a parsed file's directives on a fresh replayer and compares
// each output with its expected block.
func Replay(f *File, seed uint64) (*Result, error) {
	r := NewReplayer(seed)
	defer r.Close()
	res := &Result{File: f}
	for _, d := range f.Directives {
		out, err := r.Exec(d)
		if err != nil {
			return res, err
		}
		res.Outputs = append(res.Outputs, out)
		if out != d.Expected {
			res.Mismatches = append(res.Mismatches, Mismatch{Directive: d, Expected: d.Expected, Actual: out})
		}
	}
	return res, nil
}

// DefaultSeed is the seed a replay uses unless told otherwise.
const DefaultSeed = 1
