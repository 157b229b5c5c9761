package repl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"clink/sql/ast"
	"clink/state"
)

// ErrQuit is returned by Command for \quit.
var ErrQuit = errors.New("quit")

// command is a backslash command.
type command struct {
	name, args, help string
	run              func(s *Shell, ctx context.Context, arg string) error
}

var commandList []command

func init() {
	commandList = []command{
		{`\help`, "[STATEMENT]", "show this help (also \\?); with a statement, its syntax as \\h", (*Shell).cmdHelp},
		{`\h`, "[STATEMENT]", "syntax of a SQL statement (\\h alone lists them)", (*Shell).cmdSQLHelp},
		{`\tables`, "", "list tables and views", func(s *Shell, ctx context.Context, _ string) error { return s.execSQL(ctx, "SHOW TABLES") }},
		{`\d`, "[NAME]", "list tables and views, or show NAME's columns", (*Shell).cmdD},
		{`\dt`, "[PATTERN]", "list tables (names matching a glob such as bid*)", (*Shell).cmdDT},
		{`\dv`, "[PATTERN]", "list views", (*Shell).cmdDV},
		{`\describe`, "NAME", "show a table's or view's columns", (*Shell).cmdDescribe},
		{`\i`, "FILE", "run the statements and commands in FILE", (*Shell).cmdInclude},
		{`\o`, "[FILE]", "send results to FILE (truncated); \\o alone: back to the terminal", (*Shell).cmdOutput},
		{`\e`, "", "edit the query buffer (else the last input) in $VISUAL / $EDITOR (vi), then run it", func(*Shell, context.Context, string) error {
			return errors.New(`\e edits at the interactive prompt only`)
		}},
		{`\explain`, "QUERY", "show a query's operator graph", (*Shell).cmdExplain},
		{`\set`, "[NAME [VALUE]]", "show settings, or change one", (*Shell).cmdSet},
		{`\unset`, "NAME", "reset a setting to its default", (*Shell).cmdUnset},
		{`\mode`, "[table|changelog|append]", "show or change how a SELECT is shown", (*Shell).cmdMode},
		{`\timing`, "[on|off]", "toggle statement timing", (*Shell).cmdTiming},
		{`\x`, "[on|off|auto]", "toggle expanded display (one line per column; auto: when wider than the terminal)", (*Shell).cmdExpanded},
		{`\pager`, "[on|off|always]", "page printed results taller than the terminal through $PAGER (less -S); no argument toggles", (*Shell).cmdPager},
		{`\pset`, "pager|format|expanded [VALUE]", "psql's \\pset: the pager, the output format (table, csv, jsonl, changelog), \\x", (*Shell).cmdPset},
		{`\copy`, "(QUERY) TO 'FILE' [WITH (FORMAT csv|jsonl)]", "run a bounded query and write its result to FILE (csv by default)", (*Shell).cmdCopy},
		{`\checkpoint`, "", "checkpoint the last query (live: press c)", (*Shell).cmdCheckpoint},
		{`\crash`, "", "kill the last query's job without a checkpoint (live: press x)", (*Shell).cmdCrash},
		{`\restore`, "[ID]", "restore the last query from a checkpoint (default: the latest) and resume it", (*Shell).cmdRestore},
		{`\watch`, "[SECONDS] [c=N]", "re-run the last (bounded) query every SECONDS (default 2) until Ctrl-C, or N times", (*Shell).cmdWatch},
		{`\result`, "", "show the last query's current result", (*Shell).cmdResult},
		{`\tui`, "", "open the runtime dashboard over the last query (live: press t); q returns", (*Shell).cmdTUI},
		{`\open`, "NOTEBOOK.md", "load a notebook's cells", (*Shell).cmdOpen},
		{`\cells`, "", "list the open notebook's cells", (*Shell).cmdCells},
		{`\cell`, "[N]", "show the current cell (or go to cell N)", (*Shell).cmdCell},
		{`\run`, "", "run the current cell (after the cells above it) and save its output", (*Shell).cmdRun},
		{`\w`, "", "save the notebook, with outputs of cells re-run out of order", (*Shell).cmdWrite},
		{`\next`, "", "go to the next cell and show it", (*Shell).cmdNext},
		{`\prev`, "", "go to the previous cell and show it", (*Shell).cmdPrev},
		{`\edit`, "", "edit the current cell: the next statement you enter replaces it and runs (saved when in order)", (*Shell).cmdEdit},
		{`\quit`, "", "leave (also \\q or Ctrl-D)", func(*Shell, context.Context, string) error { return ErrQuit }},
	}
}

// commandAliases are short spellings.
var commandAliases = map[string]string{`\?`: `\help`, `\q`: `\quit`, `\exit`: `\quit`,
	`\include`: `\i`, `\out`: `\o`, `\n`: `\next`, `\p`: `\prev`, `\r`: `\run`}

func commandNames() []string {
	var out []string
	for _, c := range commandList {
		out = append(out, c.name)
	}
	return out
}

// Command runs one backslash command line.
func (s *Shell) Command(ctx context.Context, line string) error {
	name, arg, _ := strings.Cut(strings.TrimSpace(line), " ")
	name = strings.ToLower(name)
	if a, ok := commandAliases[name]; ok {
		name = a
	}
	arg = strings.TrimSpace(arg)
	for _, c := range commandList {
		if c.name == name {
			return c.run(s, ctx, arg)
		}
	}
	return fmt.Errorf("unknown command %s%s; \\help lists the commands", name, didYouMeanCommand(name))
}

// didYouMeanCommand is " (did you mean \\x?)" for an unknown command,
// comparing the names without their backslash.
func didYouMeanCommand(name string) string {
	var bare []string
	for _, c := range commandSpellings() {
		bare = append(bare, strings.TrimPrefix(c, `\`))
	}
	if s := ast.Suggest(strings.TrimPrefix(name, `\`), bare); s != "" {
		return ` (did you mean \` + s + `?)`
	}
	return ""
}

// commandSpellings are the command names and their aliases, in a stable
// order, for "did you mean".
func commandSpellings() []string {
	out := commandNames()
	aliases := make([]string, 0, len(commandAliases))
	for a := range commandAliases {
		aliases = append(aliases, a)
	}
	sort.Strings(aliases)
	return append(out, aliases...)
}

func (s *Shell) cmdHelp(ctx context.Context, arg string) error {
	if arg != "" {
		return s.cmdSQLHelp(ctx, arg)
	}
	var b strings.Builder
	b.WriteString("SQL statements end with ';' and may span lines. Commands:\n")
	for _, c := range commandList {
		fmt.Fprintf(&b, "  %-28s %s\n", c.name+" "+c.args, c.help)
	}
	b.WriteString("During a live query: c checkpoint, x crash, r restore, < > (or arrows) scroll columns, Ctrl-C (or q) stop.\n")
	b.WriteString("Line editing: Tab completes, Ctrl-R searches history, Ctrl-C clears the input, Ctrl-D quits.\n")
	io.WriteString(s.out, b.String())
	return nil
}

// execSQL runs a statement given by a command.
func (s *Shell) execSQL(ctx context.Context, sql string) error {
	res, err := s.sess.Exec(ctx, sql)
	if err != nil {
		return err
	}
	for _, r := range res {
		s.printResult(r)
	}
	return nil
}

func (s *Shell) cmdDescribe(ctx context.Context, arg string) error {
	if arg == "" {
		return errors.New(`usage: \describe NAME`)
	}
	return s.execSQL(ctx, "DESCRIBE "+strings.TrimSuffix(arg, ";"))
}

func (s *Shell) cmdExplain(ctx context.Context, arg string) error {
	if arg == "" {
		return errors.New(`usage: \explain SELECT ...`)
	}
	return s.execSQL(ctx, "EXPLAIN "+strings.TrimSuffix(arg, ";"))
}

func (s *Shell) cmdSet(_ context.Context, arg string) error {
	if arg == "" {
		io.WriteString(s.out, s.opts.Show())
		return nil
	}
	name, val, _ := strings.Cut(arg, " ")
	st, err := findSetting(name)
	if err != nil {
		return err
	}
	val = strings.Trim(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(val), "=")), `'"`)
	if val == "" {
		fmt.Fprintf(s.out, "%s = %s\n", st.name, orDash(st.get(&s.opts.Settings)))
		return nil
	}
	next := s.opts.Settings
	if err := st.set(&next, val); err != nil {
		return fmt.Errorf("\\set %s: %w", st.name, err)
	}
	return s.apply(st, next)
}

func (s *Shell) cmdUnset(_ context.Context, arg string) error {
	st, err := findSetting(arg)
	if err != nil {
		return err
	}
	next := s.opts.Settings
	st.reset(&next, s.defaults)
	return s.apply(st, next)
}

// apply switches to new settings, rebuilding the session when the
// session's configuration changed; on failure nothing changes.
func (s *Shell) apply(st setting, next Settings) error {
	prev := s.opts.Settings
	s.opts.Settings = next
	if next.StateURI != prev.StateURI || next.Parallelism != prev.Parallelism || next.MaxInFlight != prev.MaxInFlight {
		old := s.sess
		if err := s.newSession(); err != nil {
			s.opts.Settings, s.sess = prev, old
			return fmt.Errorf("\\set %s: %w", st.name, err)
		}
	}
	fmt.Fprintf(s.out, "%s = %s\n", st.name, orDash(st.get(&s.opts.Settings)))
	return nil
}

func (s *Shell) cmdMode(ctx context.Context, arg string) error {
	if arg == "" {
		fmt.Fprintf(s.out, "mode = %s\n", s.opts.Mode)
		return nil
	}
	return s.cmdSet(ctx, "mode "+arg)
}

func (s *Shell) cmdTiming(ctx context.Context, arg string) error {
	if arg == "" {
		arg = onOff(!s.opts.Timing)
	}
	return s.cmdSet(ctx, "timing "+arg)
}

// lastQuery returns the last query or an error saying there is none.
func (s *Shell) lastQuery() (*query, error) {
	if s.last == nil {
		return nil, errors.New("no query yet: run a SELECT first")
	}
	return s.last, nil
}

func (s *Shell) cmdCheckpoint(ctx context.Context, _ string) error {
	q, err := s.lastQuery()
	if err != nil {
		return err
	}
	if q.crashed || q.h.Job() == nil || (!q.h.Stepped() && q.h.Err() != nil) {
		return errors.New("the last query is not running: checkpoint it live (press c) or \\restore it first")
	}
	if q.h.Finished() {
		return errors.New("the last query has finished: there is nothing left to checkpoint")
	}
	fmt.Fprintln(s.out, s.checkpoint(ctx, q))
	return nil
}

func (s *Shell) cmdCrash(context.Context, string) error {
	q, err := s.lastQuery()
	if err != nil {
		return err
	}
	fmt.Fprintln(s.out, s.crash(q))
	return nil
}

func (s *Shell) cmdRestore(ctx context.Context, arg string) error {
	q, err := s.lastQuery()
	if err != nil {
		return err
	}
	var id state.CheckpointID
	if arg != "" {
		n, err := strconv.ParseUint(arg, 10, 64)
		if err != nil {
			return fmt.Errorf("\\restore: checkpoint id must be a number, got %q", arg)
		}
		id = state.CheckpointID(n)
	}
	q.view.Store(newView(s, q)) // before the restored job streams into it
	msg := s.restore(ctx, q, id)
	fmt.Fprintln(s.out, msg)
	if q.crashed || !strings.HasPrefix(msg, "restored") {
		return nil
	}
	if q.h.Stepped() {
		return s.stepQuery(q)
	}
	return s.watch(ctx, q)
}

func (s *Shell) cmdResult(context.Context, string) error {
	q, err := s.lastQuery()
	if err != nil {
		return err
	}
	s.printTable(q)
	return nil
}

// sortedCommands lists the command names sorted (for help output tests).
func sortedCommands() []string { return sortedCopy(commandNames()) }

var _ = sort.Strings
