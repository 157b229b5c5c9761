package plan

import (
	"time"

	"clink/sql/expr"
	"clink/sql/ops"
	"clink/sql/types"
)

// LocalTimeZoneOption is the SET key of the session time zone (Flink's
// name; PostgreSQL's SET TIME ZONE parses to it).
const LocalTimeZoneOption = "table.local-time-zone"

// SetZone sets the session time zone queries are planned in: TIMESTAMP_LTZ
// values show in it, CASTs between TIMESTAMP and TIMESTAMP_LTZ use it and
// TIMESTAMP_LTZ windows align to it.
func (c *Catalog) SetZone(z expr.Zone) { c.zone = z }

// Zone is the session time zone (UTC unless set).
func (c *Catalog) Zone() expr.Zone {
	if c.zone.Loc == nil {
		return expr.UTC
	}
	return c.zone
}

// inZone runs f, which compiles expressions, in the session zone.
func (c *Catalog) inZone(f func() error) error { return expr.InZone(c.Zone(), f) }

// zoneRef copies a TIMESTAMP_LTZ column, marked to show in the session
// zone (types.Value.InZone): the last projection of a query whose result
// has TIMESTAMP_LTZ columns, so every sink and display shows them as
// wall times of the session zone whatever state they went through.
type zoneRef struct {
	idx  int
	typ  types.Type
	zone string
}

func (z zoneRef) Type() types.Type { return z.typ }
func (z zoneRef) Eval(r types.Row) (types.Value, error) {
	if z.idx >= len(r) {
		return types.NullValue, nil
	}
	return r[z.idx].InZone(z.zone), nil
}

// showInZone puts the zone-marking projection on root when its result has
// a TIMESTAMP_LTZ column; other roots are returned as they are.
func showInZone(root *Node, z expr.Zone) *Node {
	if z.Loc == time.UTC || z.Loc == nil { // values without a zone show in UTC already
		return root
	}
	zoned := false
	for _, c := range root.Schema.Cols {
		zoned = zoned || (c.Type.Kind == types.KindTimestamp && c.Type.Zoned)
	}
	if !zoned {
		return root
	}
	exprs := make([]expr.Expr, len(root.Schema.Cols))
	for i, c := range root.Schema.Cols {
		if c.Type.Kind == types.KindTimestamp && c.Type.Zoned {
			exprs[i] = zoneRef{idx: i, typ: c.Type, zone: z.Name}
		} else {
			exprs[i] = passRef{idx: i, typ: c.Type}
		}
	}
	return calc(root, ops.Proj{Exprs: exprs}, root.Schema, "TIMESTAMP_LTZ shown in "+z.Name)
}

// zoneAlign is the UTC offset (ms) TIMESTAMP_LTZ windows planned now align
// to: the session zone's standard offset, the smaller of its January and
// July offsets this year (daylight saving time is not followed: a day
// window of Europe/Berlin runs from 00:00 CET, 01:00 CEST).
func zoneAlign() int64 {
	loc := expr.CurrentZone().Loc
	y := time.Now().Year()
	_, jan := time.Date(y, 1, 1, 0, 0, 0, 0, loc).Zone()
	_, jul := time.Date(y, 7, 1, 0, 0, 0, 0, loc).Zone()
	return int64(min(jan, jul)) * 1000
}
