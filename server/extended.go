package server

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgproto3"

	"clink/sql/ast"
	"clink/sql/ops"
	"clink/sql/parser"
	"clink/sql/types"
)

// prepared is a Parse'd statement: its text and parameter types.
type prepared struct {
	sql       string
	paramOIDs []uint32
}

// portal is a Bind'ed statement: the text with its parameters in place
// and the result formats asked for.
type portal struct {
	sql     string
	formats []int16
	// prep and lits are the prepared statement's text and the literals
	// bound for its parameters (a prepared point read: preparedRead).
	prep string
	lits []string
	// rest is what a suspended Execute (MaxRows) has not sent yet.
	rest *result
}

// parseOne parses a single statement.
func parseOne(sql string) (ast.Statement, error) {
	st, err := parser.Parse(sql)
	if err != nil {
		return nil, &syntaxError{err}
	}
	return st, nil
}

// fail wraps a statement error for the extended protocol.
func fail(err error, sql string) error {
	return &stmtError{resp: errorResponse(err, sql, 0)}
}

func (c *conn) parse(m *pgproto3.Parse) error {
	sql, err := oneStatement(m.Query)
	if err != nil {
		return fail(err, m.Query)
	}
	n := countParams(sql)
	oids := make([]uint32, n)
	for i := range oids {
		oids[i] = 0 // unspecified: the client encodes by its value, in text
		if i < len(m.ParameterOIDs) && m.ParameterOIDs[i] != 0 {
			oids[i] = m.ParameterOIDs[i]
		}
	}
	c.stmts[m.Name] = &prepared{sql: sql, paramOIDs: oids}
	c.be.Send(&pgproto3.ParseComplete{})
	return nil
}

func (c *conn) bind(m *pgproto3.Bind) error {
	ps, ok := c.stmts[m.PreparedStatement]
	if !ok {
		return fail(fmt.Errorf("prepared statement %q does not exist", m.PreparedStatement), "")
	}
	if len(m.Parameters) != len(ps.paramOIDs) {
		return fail(fmt.Errorf("bind message supplies %d parameters, but prepared statement %q requires %d",
			len(m.Parameters), m.PreparedStatement, len(ps.paramOIDs)), ps.sql)
	}
	lits := make([]string, len(m.Parameters))
	for i, raw := range m.Parameters {
		binaryFormat := formatOf(m.ParameterFormatCodes, i) == 1
		lit, err := paramLiteral(raw, ps.paramOIDs[i], binaryFormat)
		if err != nil {
			return fail(fmt.Errorf("parameter $%d: %w", i+1, err), ps.sql)
		}
		lits[i] = lit
	}
	sql, err := bindParams(ps.sql, lits)
	if err != nil {
		return fail(err, ps.sql)
	}
	c.portals[m.DestinationPortal] = &portal{sql: sql, formats: m.ResultFormatCodes, prep: ps.sql, lits: lits}
	c.be.Send(&pgproto3.BindComplete{})
	return nil
}

// formatOf is the format code of item i (none: text; one: all).
func formatOf(codes []int16, i int) int16 {
	switch {
	case len(codes) == 0:
		return 0
	case len(codes) == 1:
		return codes[0]
	case i < len(codes):
		return codes[i]
	}
	return 0
}

func (c *conn) describe(m *pgproto3.Describe) error {
	var sql string
	var formats []int16
	if m.ObjectType == 'S' {
		ps, ok := c.stmts[m.Name]
		if !ok {
			return fail(fmt.Errorf("prepared statement %q does not exist", m.Name), "")
		}
		return c.describeStatement(ps)
	} else {
		p, ok := c.portals[m.Name]
		if !ok {
			return fail(fmt.Errorf("portal %q does not exist", m.Name), "")
		}
		sql, formats = p.sql, p.formats
	}
	if sql == "" {
		c.be.Send(&pgproto3.NoData{})
		return nil
	}
	ctx, done := c.statementContext()
	cols, err := c.s.core.describe(ctx, c.cs, sql)
	done()
	if err != nil {
		return fail(err, sql)
	}
	if cols == nil {
		c.be.Send(&pgproto3.NoData{})
		return nil
	}
	c.be.Send(rowDescription(cols, formats))
	return nil
}

// describeStatement describes a prepared statement: its parameters'
// types (those the client left unspecified as the statement uses them,
// so drivers encode each argument as it needs) and its result columns.
func (c *conn) describeStatement(ps *prepared) error {
	ctx, done := c.statementContext()
	defer done()
	cols, typed, err := c.s.core.describePrepared(ctx, c.cs, ps.sql, len(ps.paramOIDs))
	if err != nil {
		return fail(err, ps.sql)
	}
	for i, t := range typed {
		if i < len(ps.paramOIDs) && ps.paramOIDs[i] == 0 && t.Kind != types.KindNull {
			ps.paramOIDs[i], _ = pgType(t)
		}
	}
	c.be.Send(&pgproto3.ParameterDescription{ParameterOIDs: ps.paramOIDs})
	if cols == nil {
		c.be.Send(&pgproto3.NoData{})
		return nil
	}
	c.be.Send(rowDescription(cols, nil))
	return nil
}

func (c *conn) execute(m *pgproto3.Execute) error {
	p, ok := c.portals[m.Portal]
	if !ok {
		return fail(fmt.Errorf("portal %q does not exist", m.Portal), "")
	}
	if p.sql == "" {
		c.be.Send(&pgproto3.EmptyQueryResponse{})
		return nil
	}
	ctx, done := c.statementContext()
	defer done()
	var err error
	r := p.rest
	if r == nil {
		var ok bool
		if r, ok = c.s.core.preparedRead(ctx, p.prep, p.lits); !ok {
			r, err = c.s.core.exec(ctx, c.cs, p.sql)
		}
	}
	if err == nil && m.MaxRows > 0 && r.Sub == nil && len(r.Rows) > int(m.MaxRows) {
		// Send MaxRows rows and suspend: the next Execute sends more.
		part := *r
		part.Rows = r.Rows[:m.MaxRows]
		rest := *r
		rest.Rows = r.Rows[m.MaxRows:]
		if strings.HasPrefix(rest.Tag, "SELECT ") {
			rest.Tag = fmt.Sprintf("SELECT %d", len(rest.Rows)) // rows of the Execute that completes
		}
		p.rest = &rest
		err = c.sendRows(&part, p.formats)
		if err == nil {
			c.be.Send(&pgproto3.PortalSuspended{})
		}
	} else if err == nil {
		p.rest = nil
		err = c.sendResult(ctx, r, p.formats, false)
	}
	var werr *writeError
	if errors.As(err, &werr) {
		return werr.err
	}
	if err != nil {
		return fail(err, p.sql)
	}
	return nil
}

// rowDescription describes columns in the given result formats.
func rowDescription(cols []column, formats []int16) *pgproto3.RowDescription {
	rd := &pgproto3.RowDescription{Fields: make([]pgproto3.FieldDescription, len(cols))}
	for i, col := range cols {
		oid, size := pgType(col.Type)
		rd.Fields[i] = pgproto3.FieldDescription{Name: []byte(col.Name), DataTypeOID: oid, DataTypeSize: size,
			TypeModifier: -1, Format: formatOf(formats, i)}
	}
	return rd
}

// rowFlushEvery is how many rows go out between flushes of a result.
const rowFlushEvery = 1000

// sendResult writes a statement's result: its rows (after a
// RowDescription in the simple protocol) and CommandComplete, or a
// subscription's changes until the statement is cancelled.
func (c *conn) sendResult(ctx context.Context, r *result, formats []int16, simple bool) error {
	if r.Sub != nil {
		return c.sendSubscription(ctx, r, formats, simple)
	}
	if r.Columns != nil {
		if simple {
			c.be.Send(rowDescription(r.Columns, formats))
		}
		if err := c.sendRows(r, formats); err != nil {
			return err
		}
	}
	if r.Notice != "" {
		c.be.Send(&pgproto3.NoticeResponse{Severity: "NOTICE", SeverityUnlocalized: "NOTICE", Code: "00000", Message: r.Notice})
	}
	if r.Warning != "" {
		c.be.Send(&pgproto3.NoticeResponse{Severity: "WARNING", SeverityUnlocalized: "WARNING", Code: "01000", Message: r.Warning})
	}
	tag := r.Tag
	if tag == "" {
		tag = "OK"
	}
	c.be.Send(&pgproto3.CommandComplete{CommandTag: []byte(tag)})
	return nil
}

// sendRows sends a result's rows, flushing every rowFlushEvery.
func (c *conn) sendRows(r *result, formats []int16) error {
	for i, row := range r.Rows {
		dr, err := dataRow(row, r.Columns, formats)
		if err != nil {
			return err
		}
		c.be.Send(dr)
		if i%rowFlushEvery == rowFlushEvery-1 {
			if err := c.flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

// dataRow encodes one row.
func dataRow(row types.Row, cols []column, formats []int16) (*pgproto3.DataRow, error) {
	dr := &pgproto3.DataRow{Values: make([][]byte, len(row))}
	for i, v := range row {
		if formatOf(formats, i) == 0 {
			dr.Values[i] = encodeText(v)
			continue
		}
		b, err := encodeBinary(v, cols[i].Type)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", cols[i].Name, err)
		}
		dr.Values[i] = b
	}
	return dr, nil
}

// sendSubscription streams a SUBSCRIBE: the snapshot as +I rows, then
// each barrier's changes, flushed batch by batch, until the statement is
// cancelled (an ErrorResponse follows) or the view's job ends.
func (c *conn) sendSubscription(ctx context.Context, r *result, formats []int16, simple bool) (err error) {
	s := r.Sub
	defer s.close()
	ctx, cancel := context.WithCancel(ctx)
	stopWatch := c.watchClient(cancel)
	defer func() {
		cancel()
		if stopWatch() && err != nil {
			err = &writeError{errors.New("the client closed the connection during SUBSCRIBE")}
		}
	}()
	cols := append([]column{{Name: "op", Type: types.Varchar}}, s.cols...)
	n := 0
	emit := func(kind ops.Kind, row types.Row) error {
		full := append(types.Row{types.NewVarchar(opName(kind))}, row...)
		n++
		if r.Copy {
			c.be.Send(&pgproto3.CopyData{Data: copyLine(full)})
			return nil
		}
		dr, err := dataRow(full, cols, formats)
		if err == nil {
			c.be.Send(dr)
		}
		return err
	}
	if r.Copy {
		c.be.Send(&pgproto3.CopyOutResponse{OverallFormat: 0, ColumnFormatCodes: make([]uint16, len(cols))})
	} else if simple {
		c.be.Send(rowDescription(cols, formats))
	}
	for _, row := range s.snapshot {
		if err := emit(ops.Insert, row); err != nil {
			return err
		}
	}
	for {
		if err := c.flush(); err != nil {
			return err
		}
		batch, err := s.next(ctx)
		if err != nil {
			if r.Copy {
				c.be.Send(&pgproto3.CopyDone{})
			}
			return err
		}
		if batch == nil {
			break
		}
		for _, ch := range batch {
			if err := emit(ch.Kind, ch.Row); err != nil {
				return err
			}
		}
	}
	if r.Copy {
		c.be.Send(&pgproto3.CopyDone{})
		c.be.Send(&pgproto3.CommandComplete{CommandTag: []byte(fmt.Sprintf("COPY %d", n))})
		return nil
	}
	c.be.Send(&pgproto3.CommandComplete{CommandTag: []byte(fmt.Sprintf("SUBSCRIBE %d", n))})
	return nil
}

// copyLine renders a row as a COPY text line: tab-separated, \N for
// NULL, backslash escapes.
func copyLine(row types.Row) []byte {
	var b strings.Builder
	for i, v := range row {
		if i > 0 {
			b.WriteByte('\t')
		}
		t := encodeText(v)
		if t == nil {
			b.WriteString(`\N`)
			continue
		}
		b.WriteString(strings.NewReplacer(`\`, `\\`, "\t", `\t`, "\n", `\n`, "\r", `\r`).Replace(string(t)))
	}
	b.WriteByte('\n')
	return []byte(b.String())
}
