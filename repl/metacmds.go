package repl

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"clink/sql/session"
)

// maxIncludeDepth bounds \i inside \i (a file that includes itself).
const maxIncludeDepth = 16

// resolvePath makes a command's file argument absolute against BaseDir
// (the notebook's directory; "." in the REPL).
func (s *Shell) resolvePath(p string) string {
	p = strings.Trim(strings.TrimSpace(p), `'"`)
	if filepath.IsAbs(p) || s.opts.BaseDir == "" {
		return p
	}
	return filepath.Join(s.opts.BaseDir, p)
}

// cmdInclude is \i FILE: run the file's statements and commands as if
// typed, stopping at its first error, which names the file and line.
func (s *Shell) cmdInclude(ctx context.Context, arg string) error {
	if arg == "" {
		return errors.New(`usage: \i FILE`)
	}
	if s.includes >= maxIncludeDepth {
		return fmt.Errorf(`\i %s: files include each other deeper than %d`, arg, maxIncludeDepth)
	}
	src, err := os.ReadFile(s.resolvePath(arg))
	if err != nil {
		return fmt.Errorf(`\i: %w`, err)
	}
	s.includes++
	defer func() { s.includes-- }()
	err = s.Run(ctx, string(src))
	var se *ScriptError
	if errors.As(err, &se) && se.File == "" {
		se.File = strings.Trim(arg, `'"`)
	}
	return err
}

// cmdOutput is \o [FILE]: send results (tables, changes, messages) to
// FILE, truncating it, until \o alone sends them to the terminal again.
// Errors still show on the terminal. While redirected, queries are not
// drawn live: a table is written when its query ends (or is stopped with
// Ctrl-C), a changelog as it streams.
func (s *Shell) cmdOutput(_ context.Context, arg string) error {
	if strings.HasPrefix(arg, "|") {
		return errors.New(`\o |COMMAND is not supported: \o FILE writes to a file`)
	}
	if err := s.closeOutput(); err != nil {
		return err
	}
	if arg == "" {
		return nil
	}
	f, err := os.Create(s.resolvePath(arg))
	if err != nil {
		return fmt.Errorf(`\o: %w`, err)
	}
	s.term, s.out, s.redirect = s.out, f, f
	return nil
}

// closeOutput ends a \o redirection, if any.
func (s *Shell) closeOutput() error {
	if s.redirect == nil {
		return nil
	}
	f := s.redirect
	s.out, s.redirect, s.term = s.term, nil, nil
	if err := f.Close(); err != nil {
		return fmt.Errorf(`\o: closing %s: %w`, f.Name(), err)
	}
	return nil
}

// live reports whether output goes to the terminal with in-place
// refresh (not while \o sends it to a file).
func (s *Shell) live() bool { return s.opts.Live && s.redirect == nil }

// cmdD is \d [NAME]: the tables and views, or one's columns.
func (s *Shell) cmdD(ctx context.Context, arg string) error {
	if arg == "" {
		return s.listRelations(ctx, "", "")
	}
	return s.cmdDescribe(ctx, arg)
}

// cmdDT is \dt [PATTERN]: the tables (names matching the glob PATTERN).
func (s *Shell) cmdDT(ctx context.Context, arg string) error {
	return s.listRelations(ctx, "table", arg)
}

// cmdDV is \dv [PATTERN]: the views (names matching the glob PATTERN).
func (s *Shell) cmdDV(ctx context.Context, arg string) error {
	return s.listRelations(ctx, "view", arg)
}

// listRelations prints SHOW TABLES' rows of kind ("" any) whose names
// match the glob pattern ("" any).
func (s *Shell) listRelations(ctx context.Context, kind, pattern string) error {
	if _, err := path.Match(pattern, ""); err != nil {
		return fmt.Errorf("bad pattern %q: %w", pattern, err)
	}
	res, err := s.sess.Exec(ctx, "SHOW TABLES")
	if err != nil {
		return err
	}
	for _, r := range res {
		r = filterRelations(r, kind, pattern)
		if len(r.Rows) == 0 {
			fmt.Fprintln(s.out, noRelations(kind, pattern))
			continue
		}
		s.printResult(r)
	}
	return nil
}

// filterRelations keeps the rows of SHOW TABLES' result r of kind whose
// name matches pattern.
func filterRelations(r *session.Result, kind, pattern string) *session.Result {
	ki, ni := slices.Index(r.Columns, "kind"), slices.Index(r.Columns, "name")
	if ki < 0 || ni < 0 {
		return r
	}
	out := *r
	out.Rows, out.Values = nil, nil
	for i, row := range r.Rows {
		if kind != "" && row[ki] != kind {
			continue
		}
		if ok, _ := path.Match(pattern, row[ni]); pattern != "" && !ok {
			continue
		}
		out.Rows = append(out.Rows, row)
		if i < len(r.Values) {
			out.Values = append(out.Values, r.Values[i])
		}
	}
	return &out
}

// noRelations says that nothing matched.
func noRelations(kind, pattern string) string {
	what := map[string]string{"": "tables or views", "table": "tables", "view": "views"}[kind]
	if pattern != "" {
		return fmt.Sprintf("no %s match %q", what, pattern)
	}
	return "no " + what + " yet"
}
