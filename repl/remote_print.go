package repl

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgconn"
)

// PostgreSQL type OIDs the printer aligns and sizes by.
const (
	oidBool      = 16
	oidInt8      = 20
	oidInt2      = 21
	oidInt4      = 23
	oidFloat4    = 700
	oidFloat8    = 701
	oidTimestamp = 1114
	oidNumeric   = 1700
)

// printResult prints one result: a table of its rows (streamed row by
// row for a SUBSCRIBE), else its command tag.
func (r *Remote) printResult(rr *pgconn.ResultReader, stream bool) error {
	fds := rr.FieldDescriptions()
	if len(fds) == 0 {
		tag, err := rr.Close()
		if err == nil {
			fmt.Fprintln(r.out, tag.String())
		}
		return err
	}
	cols := make([]string, len(fds))
	right := make([]bool, len(fds))
	for i, fd := range fds {
		cols[i], right[i] = fd.Name, numericOID(fd.DataTypeOID)
	}
	if stream {
		return r.streamRows(rr, fds, cols)
	}
	var rows [][]string
	for rr.NextRow() {
		rows = append(rows, cellsOf(rr.Values(), fds))
	}
	if _, err := rr.Close(); err != nil {
		return err
	}
	_, _ = fmt.Fprint(r.out, RenderTable(cols, rows, right))
	return nil
}

// streamRows prints a SUBSCRIBE's changes as they arrive, on the grid the
// local shell's append mode draws (op first, coloured by kind).
func (r *Remote) streamRows(rr *pgconn.ResultReader, fds []pgconn.FieldDescription, cols []string) error {
	widths := make([]int, len(fds))
	for i, fd := range fds {
		widths[i] = max(oidWidth(fd.DataTypeOID), utf8.RuneCountInString(fd.Name))
	}
	if len(widths) > 0 && cols[0] == "op" {
		widths[0] = 2
	}
	fmt.Fprintln(r.out, gridCells(cols, widths))
	rule := make([]string, len(widths))
	for i, w := range widths {
		rule[i] = strings.Repeat("-", w)
	}
	fmt.Fprintln(r.out, "+-"+strings.Join(rule, "-+-")+"-+")
	for rr.NextRow() {
		cells := cellsOf(rr.Values(), fds)
		fmt.Fprintln(r.out, r.paintOp(cells[0], gridCells(cells, widths)))
	}
	tag, err := rr.Close()
	if err == nil {
		fmt.Fprintln(r.out, tag.String())
	}
	return err
}

// gridCells is one line of the append grid, cells cut to their widths.
func gridCells(cells []string, widths []int) string {
	out := make([]string, len(cells))
	for i, c := range cells {
		w := widths[i]
		if utf8.RuneCountInString(c) > w {
			c = string([]rune(c)[:w-1]) + "…"
		}
		out[i] = c + strings.Repeat(" ", w-utf8.RuneCountInString(c))
	}
	return "| " + strings.Join(out, " | ") + " |"
}

// paintOp colours a change line by its op, as the local shell does.
func (r *Remote) paintOp(op, s string) string {
	if !r.opts.Color {
		return s
	}
	switch op {
	case "+I":
		return "\x1b[32m" + s + ansiReset
	case "+U":
		return "\x1b[33m" + s + ansiReset
	}
	return "\x1b[31m" + s + ansiReset
}

// cellsOf renders a row's text values as the local shell prints values:
// NULL, true/false.
func cellsOf(vals [][]byte, fds []pgconn.FieldDescription) []string {
	out := make([]string, len(vals))
	for i, v := range vals {
		switch {
		case v == nil:
			out[i] = "NULL"
		case fds[i].DataTypeOID == oidBool && string(v) == "t":
			out[i] = "true"
		case fds[i].DataTypeOID == oidBool && string(v) == "f":
			out[i] = "false"
		default:
			out[i] = string(v)
		}
	}
	return out
}

func numericOID(oid uint32) bool {
	switch oid {
	case oidInt2, oidInt4, oidInt8, oidFloat4, oidFloat8, oidNumeric:
		return true
	}
	return false
}

// oidWidth is a streamed column's width by its type (as appendWidths).
func oidWidth(oid uint32) int {
	switch oid {
	case oidTimestamp:
		return 23
	case oidBool:
		return 5
	case oidInt2, oidInt4, oidInt8, oidFloat4, oidFloat8, oidNumeric:
		return 12
	}
	return 20
}

// remoteCommands are the backslash commands of a remote shell, each the
// statement it sends ("" for those handled here).
var remoteCommands = map[string]string{
	`\d`: "SHOW TABLES", `\dt`: "SHOW TABLES", `\tables`: "SHOW TABLES", `\jobs`: "SHOW JOBS",
	`\describe`: "DESCRIBE", `\explain`: "EXPLAIN", `\help`: "", `\?`: "", `\timing`: "", `\q`: "", `\quit`: "", `\tui`: "",
}

// command runs a backslash command against the server.
func (r *Remote) command(ctx context.Context, line string) error {
	name, arg, _ := strings.Cut(line, " ")
	arg = strings.TrimSpace(arg)
	sql, ok := remoteCommands[name]
	switch {
	case !ok:
		return fmt.Errorf("%s is not available with --connect (\\help lists what is)", name)
	case name == `\q` || name == `\quit`:
		return ErrQuit
	case name == `\help` || name == `\?`:
		fmt.Fprintln(r.out, `connected to a clink serve: SQL statements run on the server.
  \d [NAME]      relations, or NAME's columns (\dt, \tables, \describe NAME)
  \jobs          SHOW JOBS
  \explain Q     the server's plan of Q
  \tui [VIEW]    the attached dashboard over VIEW's job (or a list to pick from)
  \timing        toggle statement timing
  \q             leave
SUBSCRIBE TO v streams v's changes until Ctrl-C (q on a terminal; t stops it
and opens the attached dashboard over v's job when the server has --metrics).`)
		return nil
	case name == `\tui`:
		return r.openAttached(ctx, arg)
	case name == `\timing`:
		r.timing = !r.timing
		fmt.Fprintf(r.out, "Timing is %s.\n", map[bool]string{true: "on", false: "off"}[r.timing])
		return nil
	case name == `\d` && arg != "":
		sql = "DESCRIBE"
	}
	if arg != "" {
		sql += " " + arg
	} else if sql == "DESCRIBE" || sql == "EXPLAIN" {
		return fmt.Errorf("%s needs an argument", name)
	}
	return r.statement(ctx, sql)
}

// Relations implements Catalog for the completer: the server's tables
// and views.
func (r *Remote) Relations() []string {
	return r.names("SELECT table_name FROM information_schema.tables")
}

// Columns implements Catalog for the completer.
func (r *Remote) Columns(name string) []string {
	return r.names("SELECT column_name FROM information_schema.columns WHERE table_name = '" +
		strings.ReplaceAll(name, "'", "''") + "'")
}

// names reads the first column of a catalog query (nil on an error: the
// completer offers nothing).
func (r *Remote) names(sql string) []string {
	res, err := r.conn.PgConn().Exec(context.Background(), sql).ReadAll()
	if err != nil || len(res) == 0 || res[0].Err != nil {
		return nil
	}
	var out []string
	for _, row := range res[0].Rows {
		if len(row) > 0 {
			out = append(out, string(row[0]))
		}
	}
	return out
}
