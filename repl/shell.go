package repl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"clink/engine/async"
	"clink/engine/event"
	"clink/sql/ast"
	"clink/sql/parser"
	"clink/sql/session"
	"clink/state"
)

// Options configure a Shell.
type Options struct {
	Settings
	// BaseDir resolves relative csv / jsonl paths.
	BaseDir string
	// Color enables ANSI colours in output.
	Color bool
	// Live enables in-place refresh and live keys (a terminal).
	Live bool
	// Stepped runs queries deterministically on a simulated clock and
	// executor: each query runs until nothing is runnable (notebooks).
	Stepped bool
	// Keys, when set, delivers single key presses during a live query
	// until ctx is done; wait blocks until it stopped reading.
	Keys func(ctx context.Context) (keys <-chan byte, wait func())
	// Height returns the terminal height (nil: 24 lines).
	Height func() int
	// Width returns the terminal width (nil: 80 columns); live views
	// fit their lines to it so that redraws stay in place.
	Width func() int
	// Dashboard, when set, is what \tui (and t during a live query)
	// opens; it needs Live.
	Dashboard Dashboard
	// Attach, when set, is what a remote shell's \tui (and t during a
	// SUBSCRIBE) opens: the attached dashboard over a server job; it
	// needs Live.
	Attach AttachDashboard
}

// Shell runs statements and backslash commands against a session and
// writes their output; it is the engine behind the REPL, piped scripts and
// notebooks. It is not safe for concurrent use.
type Shell struct {
	opts     Options
	defaults Settings
	sess     *session.Session
	// replay holds the catalog statements (CREATE, DROP, INSERT, DELETE,
	// UPDATE) run so far, replayed into a new session when a setting
	// needs one.
	replay []string
	last   *query
	// at is the statement running now, for positions in its script.
	at   stmtPos
	out  io.Writer
	book *notebookState
	// failed holds failed-checkpoint notices from the session's ticker
	// until the watch loop shows them.
	failed notices
	// pagerNoted: the pager's fallback note was shown.
	pagerNoted bool
	// redirect is the \o file results go to (nil: the terminal, term
	// then unused); term is the output it replaced.
	redirect *os.File
	term     io.Writer
	// includes is how deep \i files nest now.
	includes int
	// typeahead holds keys typed while a live query ended, for the
	// prompt (TakeTypeahead).
	typeahead []byte
	// watching: a \watch loop runs (its results are not paged).
	watching bool
	// keys reads the live keys of the query being watched (nil when
	// none); the pager stops it before it takes the terminal.
	keys *keyReader
}

// notices is a queue of messages written by one goroutine and shown by
// another.
type notices struct {
	mu   sync.Mutex
	msgs []string
}

func (n *notices) add(msg string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.msgs = append(n.msgs, msg)
}

func (n *notices) drain() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	m := n.msgs
	n.msgs = nil
	return m
}

// query is the last SELECT's handle and the checkpoints taken of it.
type query struct {
	h       *session.Handle
	ckpts   []state.CheckpointID
	crashed bool
	// streamed: the sink writes every change to the view (no terminal).
	streamed bool
	view     atomic.Pointer[view] // the view showing the query now
	at       stmtPos              // where the SELECT was in its script
	sql      string               // the SELECT's text, for \watch
}

// NewShell returns a shell writing to out.
func NewShell(opts Options, out io.Writer) (*Shell, error) {
	if opts.Mode == "" {
		opts.Mode = ModeTable
	}
	if opts.StateURI == "" {
		opts.StateURI = "memory://"
	}
	s := &Shell{opts: opts, defaults: opts.Settings, out: out}
	if err := s.newSession(); err != nil {
		return nil, err
	}
	return s, nil
}

// TakeTypeahead returns the keys typed during a live query that it did
// not use (the next command, typed as the query ended) and forgets them;
// the REPL feeds them to its line editor.
func (s *Shell) TakeTypeahead() []byte {
	t := s.typeahead
	s.typeahead = nil
	return t
}

// Settings returns the current settings.
func (s *Shell) Settings() Settings { return s.opts.Settings }

// newSession builds a session from the settings and replays the catalog.
func (s *Shell) newSession() error {
	cfg := session.Config{StateURI: s.opts.StateURI, Parallelism: s.opts.Parallelism,
		MaxInFlight: s.opts.MaxInFlight, BaseDir: s.opts.BaseDir, Clock: async.RealClock{},
		Resume: s.opts.Restore, SoftMemoryLimit: !s.opts.Stepped, MaxOutage: s.opts.MaxOutage,
		OnCheckpointFailed: func(_ string, id state.CheckpointID, err error) {
			s.failed.add(fmt.Sprintf("checkpoint %d failed: %s", id, session.BriefError(err)))
		}}
	if !s.opts.Live {
		// The live view checkpoints on its own ticker; elsewhere the
		// session does.
		cfg.CheckpointInterval = s.opts.CheckpointInterval
	}
	if s.opts.Dashboard != nil {
		cfg.Bus = event.NewBus() // the dashboard's event panels tap it
	}
	if s.opts.Stepped {
		sim := async.NewSim(1, async.Fixed(time.Millisecond))
		cfg.Clock, cfg.Executor, cfg.Idle = sim, sim, func() bool {
			if !sim.Step() {
				return false
			}
			sim.AdvanceTo(sim.Now())
			return true
		}
		cfg.HashSeed = 1
	}
	sess, err := session.New(cfg)
	if err != nil {
		return err
	}
	for _, stmt := range s.replay {
		if _, err := sess.Exec(context.Background(), stmt); err != nil {
			return fmt.Errorf("replaying %q into the new session: %w", firstLine(stmt), err)
		}
	}
	s.sess = sess
	s.opts.Parallelism = sess.Config().Parallelism
	return nil
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}

// Close releases the last query and closes a \o file.
func (s *Shell) Close() error {
	if err := s.closeOutput(); err != nil {
		fmt.Fprintln(s.out, err)
	}
	if s.book != nil {
		s.book.sh.Close()
		s.book = nil
	}
	if s.last != nil {
		err := s.last.h.Close()
		s.last = nil
		return err
	}
	return nil
}

// Relations implements Catalog for the completer.
func (s *Shell) Relations() []string {
	c := s.sess.Catalog()
	return append(c.Tables(), c.Views()...)
}

// Columns implements Catalog for the completer.
func (s *Shell) Columns(name string) []string {
	c := s.sess.Catalog()
	if t, ok := c.Table(name); ok {
		return ColumnNames(t.Columns)
	}
	if v, ok := c.View(name); ok {
		return ColumnNames(v.Columns)
	}
	return nil
}

// Run runs a script of statements and backslash commands (one per line,
// outside statements) and writes their output. It stops at the first
// error and returns it; the error renders with a caret into src.
func (s *Shell) Run(ctx context.Context, src string) error {
	for _, chunk := range SplitCommands(src) {
		if err := s.runChunk(ctx, src, chunk); err != nil {
			return err
		}
	}
	return nil
}

// runChunk runs one chunk of src: a backslash command or SQL; an error
// is positioned in src (or in the \i file it came from).
func (s *Shell) runChunk(ctx context.Context, src string, chunk Chunk) error {
	if !chunk.Command {
		return s.runSQL(ctx, src, chunk)
	}
	if err := s.Command(ctx, chunk.Text); err != nil {
		var inner *ScriptError
		if errors.As(err, &inner) && inner.File != "" {
			return err // an error in a \i file, positioned in it
		}
		return &ScriptError{Src: src, Offset: chunk.Offset, Err: err, Command: true}
	}
	return nil
}

func (s *Shell) runSQL(ctx context.Context, src string, chunk Chunk) error {
	stmts, err := parser.ParseScript(chunk.Text)
	if err != nil {
		return &ScriptError{Src: src, Offset: chunk.Offset, Err: err}
	}
	at := 0
	for _, st := range stmts {
		off := strings.Index(chunk.Text[at:], st.Text)
		if off < 0 {
			off = 0
		}
		off += at
		at = off + len(st.Text)
		start := time.Now()
		s.at = stmtPos{src, chunk.Offset + off}
		if err := s.statement(ctx, st); err != nil {
			return &ScriptError{Src: src, Offset: chunk.Offset + off, Err: err, Stmt: st.Text}
		}
		if s.opts.Timing {
			fmt.Fprintf(s.out, "Time: %.3f ms\n", float64(time.Since(start).Microseconds())/1000)
		}
	}
	return nil
}

// statement runs one parsed statement.
func (s *Shell) statement(ctx context.Context, st parser.Stmt) error {
	if _, ok := st.AST.(*ast.QueryStmt); ok {
		return s.runQuery(ctx, st.Text)
	}
	if x, ok := st.AST.(*ast.Set); ok && displaySetting(x.Key) {
		return s.cmdSet(ctx, strings.ToLower(x.Key)+" "+x.Value)
	}
	res, err := s.sess.Exec(ctx, st.Text)
	if err != nil {
		return err
	}
	switch x := st.AST.(type) {
	case *ast.CreateTable, *ast.CreateView, *ast.Drop, *ast.Insert, *ast.Delete, *ast.Update:
		s.replay = append(s.replay, st.Text)
	case *ast.Set:
		cfg := s.sess.Config()
		s.opts.StateURI, s.opts.Parallelism = cfg.StateURI, cfg.Parallelism
		if k := strings.ToLower(x.Key); k != "parallelism" && !strings.HasPrefix(k, "state") {
			s.replay = append(s.replay, st.Text) // a rebuilt session keeps it
		}
	}
	for _, r := range res {
		s.printResult(r)
	}
	switch st.AST.(type) {
	case *ast.Insert, *ast.Delete, *ast.Update:
		if s.opts.Stepped {
			return s.stepLast()
		}
	}
	return nil
}

// printResult writes a statement's result: a message, or a table.
func (s *Shell) printResult(r *session.Result) {
	if note := rowErrorsNote(r.ExprErrors, s.at); note != "" {
		defer fmt.Fprintln(s.out, note)
	}
	if r.Columns == nil {
		fmt.Fprintln(s.out, r.Message)
		return
	}
	if s.formatted() {
		if err := writeResult(s.out, s.opts.Format, r); err != nil {
			fmt.Fprintln(s.out, err)
		}
		return
	}
	right := make([]bool, len(r.Columns))
	for i, v := range r.Values {
		_ = i
		for k, x := range v {
			if k < len(right) && !x.IsNull() {
				right[k] = isNumericKind(x)
			}
		}
	}
	s.emit(RenderTable(r.Columns, r.Rows, right))
	if r.Message != "" {
		fmt.Fprintln(s.out, r.Message)
	}
}

// setLast makes q the last query, closing the previous one.
func (s *Shell) setLast(q *query) {
	if s.last != nil {
		s.last.h.Close()
	}
	s.last = q
}

// ScriptError is an error in a script: the cause, the script, and the
// byte offset of the statement or command it belongs to.
type ScriptError struct {
	Src    string
	Offset int
	Stmt   string
	Err    error
	// Command marks an error of a backslash command (shown without caret).
	Command bool
	// File is the script's file when it was run by \i: Render names it
	// instead of its caller's file.
	File string
}

// Error renders the cause (positions as in the statement).
func (e *ScriptError) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *ScriptError) Unwrap() error { return e.Err }

// Render renders the error for a user: "[file:]L:C: message", the line of
// the script and a caret under the offending token (or the statement's
// start when the error has no position). A backslash command's error has
// no caret, and no position either when there is no file (typed at the
// prompt or in a notebook cell, where "1:1" says nothing).
func (e *ScriptError) Render(file string) string {
	if e.File != "" {
		file = e.File
	}
	pos, msg := e.position()
	prefix := ""
	if file != "" {
		prefix = file + ":"
	}
	if e.Command {
		if file == "" {
			return "ERROR: " + msg
		}
		return fmt.Sprintf("%s%s: ERROR: %s", prefix, pos, msg)
	}
	out := fmt.Sprintf("%s%s: ERROR: %s", prefix, pos, msg)
	if c := ast.Caret(e.Src, pos); c != "" {
		out += "\n" + c
	}
	return out
}

// position returns the error's absolute position in Src and its message
// without a position prefix.
func (e *ScriptError) position() (ast.Pos, string) {
	var ae *ast.Error
	if errors.As(e.Err, &ae) {
		rel := ae.Pos
		if e.Stmt == "" && e.Offset == 0 {
			return rel, ae.Msg
		}
		return offsetPos(e.Src, e.Offset+rel.Offset), ae.Msg
	}
	msg := e.Err.Error()
	var se *session.Error
	if errors.As(e.Err, &se) {
		msg = se.Err.Error()
	}
	return offsetPos(e.Src, e.Offset), msg
}

// offsetPos converts a byte offset of src to a line and column.
func offsetPos(src string, off int) ast.Pos {
	off = min(max(off, 0), len(src))
	line := 1 + strings.Count(src[:off], "\n")
	col := off - (strings.LastIndexByte(src[:off], '\n') + 1) + 1
	return ast.Pos{Offset: off, Line: line, Col: col}
}

// width is the terminal width for live views (80 when unknown).
func (o Options) width() int {
	if o.Width != nil {
		if w := o.Width(); w > 0 {
			return w
		}
	}
	return 80
}

// height is the terminal height for live tables (24 when unknown).
func (o Options) height() int {
	if o.Height != nil {
		if h := o.Height(); h > 0 {
			return h
		}
	}
	return 24
}
