package repl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"sync"

	"clink/sql/ops"
	"clink/sql/session"
)

// formatted reports whether results print with `clink run`'s encoders
// (\pset format csv|jsonl|changelog) instead of the live views.
func (s *Shell) formatted() bool { return s.opts.Format != "" && s.opts.Format != FormatTable }

// runFormatted runs a SELECT to its end (or Ctrl-C) and writes it to w in
// format f, as `clink run` does: with changes, its changelog (an op
// column) as it streams; without, the final result once it ends (sorted
// when the query has no ORDER BY).
// It returns the rows written.
func (s *Shell) runFormatted(ctx context.Context, sql string, w io.Writer, f Format, changes bool) (int, error) {
	h, n, err := s.formattedQuery(ctx, sql, w, f, changes)
	if h != nil {
		h.Close()
	}
	return n, err
}

// runFormattedLast is a SELECT typed under \pset format: runFormatted to
// the shell's output, the query then the last one (\watch re-runs it,
// in the format; its handle is closed, so \result shows nothing and
// \checkpoint refuses).
func (s *Shell) runFormattedLast(ctx context.Context, sql string) error {
	h, _, err := s.formattedQuery(ctx, sql, s.out, s.opts.Format, s.opts.Mode != ModeTable)
	if h == nil {
		return err
	}
	h.Close()
	s.setLast(&query{at: s.at, sql: sql, h: h})
	return err
}

// formattedQuery is runFormatted leaving the handle open (nil when the
// query did not start).
func (s *Shell) formattedQuery(ctx context.Context, sql string, w io.Writer, f Format, changes bool) (*session.Handle, int, error) {
	var (
		mu sync.Mutex
		rw *ResultWriter
		n  int
	)
	qo := session.QueryOptions{Resume: s.sess.Config().Resume, NoTail: true, NoRewind: true, OnStart: func(h *session.Handle) error {
		rw = NewResultWriter(w, f, h.Columns, changes)
		return nil
	}}
	if changes {
		qo.NoTable = true
		qo.OnChange = func(c ops.Change) error {
			mu.Lock()
			defer mu.Unlock()
			n++
			return rw.Change(c)
		}
	}
	h, err := s.sess.QueryWith(ctx, sql, qo)
	if err != nil {
		return nil, 0, err
	}
	if err := s.awaitFormatted(ctx, h, &mu, rw); err != nil {
		return h, 0, err
	}
	if !changes {
		for _, r := range finalRows(h) {
			if err := rw.Row(r); err != nil {
				return h, n, err
			}
			n++
		}
	}
	mu.Lock()
	defer mu.Unlock()
	return h, n, rw.Flush()
}

// awaitFormatted waits for h to end: stepped, until it is idle; threaded,
// until its sources end or Ctrl-C stops it (what it wrote so far stays).
func (s *Shell) awaitFormatted(ctx context.Context, h *session.Handle, mu *sync.Mutex, rw *ResultWriter) error {
	if s.opts.Stepped {
		return h.RunUntilIdle()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	stopFlush := flushPeriodically(mu, rw)
	defer stopFlush()
	err := h.Wait(ctx)
	if ctx.Err() != nil {
		h.Cancel()
		return nil
	}
	if err != nil {
		return fmt.Errorf("query failed: %w", err)
	}
	return nil
}

// copyPattern is \copy (QUERY) TO 'FILE' [WITH] [(FORMAT f)].
var copyPattern = regexp.MustCompile(`(?is)^\((.+)\)\s+to\s+(?:'([^']*)'|"([^"]*)"|(\S+))\s*(?:with\s*)?(?:\(\s*format\s+'?(\w+)'?\s*\))?\s*;?$`)

// cmdCopy is psql's \copy (QUERY) TO 'FILE' WITH (FORMAT csv|jsonl):
// the query runs to its end client-side and its final result goes to
// FILE (relative to the script's directory), truncated; COPY n says how
// many rows. TO STDOUT (unquoted) prints it instead.
func (s *Shell) cmdCopy(ctx context.Context, arg string) error {
	m := copyPattern.FindStringSubmatch(strings.TrimSpace(arg))
	if m == nil {
		return errors.New(`usage: \copy (SELECT ...) TO 'FILE' [WITH (FORMAT csv|jsonl)]`)
	}
	query, path, format := m[1], m[2]+m[3]+m[4], m[5]
	f := FormatCSV
	if format != "" {
		var err error
		if f, err = ParseFormat(format); err != nil || f == FormatTable || f == FormatChangelog {
			return fmt.Errorf(`\copy: unknown format %q (want csv or jsonl)`, format)
		}
	}
	if strings.EqualFold(path, "stdout") && m[2]+m[3] == "" {
		_, err := s.runFormatted(ctx, query, s.out, f, false)
		return err
	}
	file, err := os.Create(s.resolvePath(path))
	if err != nil {
		return fmt.Errorf(`\copy: %w`, err)
	}
	n, err := s.runFormatted(ctx, query, file, f, false)
	if cerr := file.Close(); err == nil && cerr != nil {
		err = fmt.Errorf(`\copy: %w`, cerr)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(s.out, "COPY %d\n", n)
	return nil
}
