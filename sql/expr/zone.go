package expr

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"clink/sql/ast"
	"clink/sql/types"
)

// The session time zone. Expressions that depend on it (CAST between
// TIMESTAMP and TIMESTAMP_LTZ, text to TIMESTAMP_LTZ, EXTRACT and the
// formatting functions on a TIMESTAMP_LTZ, TIMESTAMP_LTZ windows) read it
// when they are compiled and keep it: a query planned under
// 'table.local-time-zone' = 'Europe/Berlin' keeps Berlin time while it
// runs. The planner sets it around planning with InZone; compilation
// outside InZone uses UTC.

// Zone is a named time zone.
type Zone struct {
	Name string
	Loc  *time.Location
}

// UTC is the default session zone.
var UTC = Zone{Name: "UTC", Loc: time.UTC}

var (
	zoneMu      sync.Mutex // serialises InZone: one zone per planning at a time
	compileZone atomic.Pointer[Zone]
)

// InZone runs f, which compiles expressions, with z as their session zone.
// Calls are serialised (planning is short); f must not call InZone.
func InZone(z Zone, f func() error) error {
	zoneMu.Lock()
	defer zoneMu.Unlock()
	prev := compileZone.Load()
	compileZone.Store(&z)
	defer compileZone.Store(prev)
	return f()
}

// CurrentZone is the zone expressions compiled now use.
func CurrentZone() Zone {
	if z := compileZone.Load(); z != nil {
		return *z
	}
	return UTC
}

// NewZone loads a zone by name (types.LoadZone), naming it as given.
func NewZone(name string) (Zone, error) {
	loc, err := types.LoadZone(name)
	if err != nil {
		return Zone{}, err
	}
	return Zone{Name: name, Loc: loc}, nil
}

// timestampOf is the type of a timestamp plus or minus an interval: the
// timestamp's own kind (TIMESTAMP or TIMESTAMP_LTZ).
func timestampOf(t types.Type) types.Type {
	if t.Zoned {
		return types.TimestampLTZ
	}
	return types.Timestamp
}

// zonedCast converts v of type from to type to where the session zone z
// matters, else with types.Cast: to TIMESTAMP_LTZ a TIMESTAMP is a wall
// time in z and text without an offset too; from TIMESTAMP_LTZ a
// TIMESTAMP or text is the wall time in z.
func zonedCast(v types.Value, from, to types.Type, z Zone) (types.Value, error) {
	if v.IsNull() {
		return types.NullValue, nil
	}
	switch {
	case to.Kind == types.KindTimestamp && to.Zoned:
		switch {
		case v.Kind() == types.KindVarchar:
			ms, err := types.ParseTimestampIn(v.Str(), z.Loc)
			if err != nil {
				return types.NullValue, err
			}
			return types.NewTimestampLTZ(ms, z.Name), nil
		case v.Kind() == types.KindTimestamp && !from.Zoned:
			return types.NewTimestampLTZ(types.WallToInstant(v.Int(), z.Loc), z.Name), nil
		case v.Kind() == types.KindTimestamp:
			return v.InZone(z.Name), nil
		}
	case from.Kind == types.KindTimestamp && from.Zoned && v.Kind() == types.KindTimestamp:
		switch to.Kind {
		case types.KindTimestamp:
			return types.NewTimestamp(types.InstantToWall(v.Int(), z.Loc)), nil
		case types.KindVarchar:
			return types.NewVarchar(v.InZone(z.Name).String()), nil
		}
	}
	return types.Cast(v, to)
}

// ZonedCast is CAST(v AS to) for a value of type from in zone z: what an
// INSERT stores into a column of type to.
func ZonedCast(v types.Value, from, to types.Type, z Zone) (types.Value, error) {
	return zonedCast(v, from, to, z)
}

// toWall compiles n, a TIMESTAMP_LTZ, to its wall time in the session zone
// as a TIMESTAMP (what EXTRACT and the formatting functions read); other
// nodes are returned as they are.
func toWall(n *node) *node {
	if n.typ.Kind != types.KindTimestamp || !n.typ.Zoned {
		return n
	}
	z := CurrentZone()
	return &node{typ: types.Timestamp, eval: func(r types.Row) (types.Value, error) {
		v, err := n.eval(r)
		if err != nil || v.IsNull() {
			return types.NullValue, err
		}
		return types.NewTimestamp(types.InstantToWall(v.Int(), z.Loc)), nil
	}}
}

// zoneArg loads a zone named by a function argument, positioned at e.
func zoneArg(e *ast.FuncCall, name string) (*time.Location, error) {
	loc, err := types.LoadZone(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", e.Name, err)
	}
	return loc, nil
}

// zoneFuncs are the functions zoneCall compiles.
var zoneFuncs = map[string]bool{"CONVERT_TZ": true, "TO_TIMESTAMP_LTZ": true, "TIMEZONE": true}

// zoneCall compiles the time zone functions; ok is false for other calls.
//
//   - CONVERT_TZ(text, from, to) (Flink): the wall time text in zone from,
//     as text in zone to ('yyyy-MM-dd HH:mm:ss').
//   - TO_TIMESTAMP_LTZ(n [, precision]) (Flink): epoch seconds (precision
//     0) or milliseconds (3, the default) as a TIMESTAMP_LTZ.
//   - TIMEZONE(zone, x) (PostgreSQL; what x AT TIME ZONE zone parses to):
//     a TIMESTAMP read as a wall time in zone gives the TIMESTAMP_LTZ, a
//     TIMESTAMP_LTZ gives its wall time in zone as a TIMESTAMP.
//
// A constant zone that does not exist is an error at the call.
func (c *Compiler) zoneCall(e *ast.FuncCall) (*node, bool, error) {
	if !zoneFuncs[e.Name] {
		return nil, false, nil
	}
	arity := map[string][2]int{"CONVERT_TZ": {3, 3}, "TO_TIMESTAMP_LTZ": {1, 2}, "TIMEZONE": {2, 2}}[e.Name]
	if len(e.Args) < arity[0] || len(e.Args) > arity[1] {
		return nil, true, ast.Errorf(e.At, "%s takes %s, got %d", e.Name, arityText(arity), len(e.Args))
	}
	args := make([]*node, len(e.Args))
	for i, a := range e.Args {
		n, err := c.compile(a)
		if err != nil {
			return nil, true, err
		}
		args[i] = n
	}
	var n *node
	var err error
	switch e.Name {
	case "CONVERT_TZ":
		n, err = convertTZ(e, args)
	case "TO_TIMESTAMP_LTZ":
		n, err = toTimestampLTZ(e, args)
	default:
		n, err = timezoneCall(e, args)
	}
	return n, true, err
}

func arityText(a [2]int) string {
	if a[0] == a[1] {
		return fmt.Sprintf("%d arguments", a[0])
	}
	return fmt.Sprintf("%d to %d arguments", a[0], a[1])
}

// zoneOf returns a function giving the zone an argument names: loaded
// once, with a positioned error, when the argument is a constant.
func zoneOf(e *ast.FuncCall, i int, n *node) (func(types.Row) (*time.Location, error), error) {
	if err := want(n.typ, isString, "VARCHAR (a time zone name)"); err != nil {
		return nil, ast.Errorf(e.Args[i].Position(), "%s: argument %d: %v", e.Name, i+1, err)
	}
	if n.konst != nil && !n.konst.IsNull() {
		loc, err := zoneArg(e, n.konst.Str())
		if err != nil {
			return nil, ast.Errorf(e.Args[i].Position(), "%v", err)
		}
		return func(types.Row) (*time.Location, error) { return loc, nil }, nil
	}
	return func(r types.Row) (*time.Location, error) {
		v, err := n.eval(r)
		if err != nil || v.IsNull() {
			return nil, err
		}
		loc, err := zoneArg(e, v.Str())
		if err != nil {
			return nil, ast.Errorf(e.At, "%v", err)
		}
		return loc, nil
	}, nil
}

func convertTZ(e *ast.FuncCall, args []*node) (*node, error) {
	if err := want(args[0].typ, isString, "VARCHAR"); err != nil {
		return nil, ast.Errorf(e.Args[0].Position(), "%s: argument 1: %v", e.Name, err)
	}
	from, err := zoneOf(e, 1, args[1])
	if err != nil {
		return nil, err
	}
	to, err := zoneOf(e, 2, args[2])
	if err != nil {
		return nil, err
	}
	return &node{typ: types.Varchar, eval: func(r types.Row) (types.Value, error) {
		v, err := args[0].eval(r)
		if err != nil || v.IsNull() {
			return types.NullValue, err
		}
		fl, err := from(r)
		if err != nil || fl == nil {
			return types.NullValue, err
		}
		tl, err := to(r)
		if err != nil || tl == nil {
			return types.NullValue, err
		}
		ms, err := types.ParseTimestampIn(v.Str(), fl)
		if err != nil {
			return types.NullValue, ast.Errorf(e.At, "%s: %v", e.Name, err)
		}
		return types.NewVarchar(time.UnixMilli(ms).In(tl).Format("2006-01-02 15:04:05")), nil
	}}, nil
}

func toTimestampLTZ(e *ast.FuncCall, args []*node) (*node, error) {
	if err := want(args[0].typ, isNum, "a number (epoch seconds or milliseconds)"); err != nil {
		return nil, ast.Errorf(e.Args[0].Position(), "%s: argument 1: %v", e.Name, err)
	}
	scale := 1.0 // precision 3: milliseconds
	if len(args) == 2 {
		p := args[1].konst
		if p == nil || !(types.Type{Kind: p.Kind()}).IsInteger() || (p.Int() != 0 && p.Int() != 3) {
			return nil, ast.Errorf(e.Args[1].Position(), "%s: the precision must be the constant 0 (epoch seconds) or 3 (milliseconds)", e.Name)
		}
		if p.Int() == 0 {
			scale = 1000
		}
	}
	return &node{typ: types.TimestampLTZ, eval: func(r types.Row) (types.Value, error) {
		v, err := args[0].eval(r)
		if err != nil || v.IsNull() {
			return types.NullValue, err
		}
		if v.Kind() == types.KindInt || v.Kind() == types.KindBigInt {
			return types.NewTimestamp(v.Int() * int64(scale)), nil
		}
		f, _ := v.AsFloat()
		return types.NewTimestamp(int64(math.Floor(f*scale + 0.5))), nil
	}}, nil
}

func timezoneCall(e *ast.FuncCall, args []*node) (*node, error) {
	zone, err := zoneOf(e, 0, args[0])
	if err != nil {
		return nil, err
	}
	x := args[1]
	if err := want(x.typ, isTime, "TIMESTAMP or TIMESTAMP_LTZ"); err != nil {
		return nil, ast.Errorf(e.Args[1].Position(), "%s: argument 2: %v", e.Name, err)
	}
	zoned := x.typ.Zoned
	typ := types.TimestampLTZ
	if zoned {
		typ = types.Timestamp
	}
	return &node{typ: typ, eval: func(r types.Row) (types.Value, error) {
		v, err := x.eval(r)
		if err != nil || v.IsNull() {
			return types.NullValue, err
		}
		loc, err := zone(r)
		if err != nil || loc == nil {
			return types.NullValue, err
		}
		if zoned {
			return types.NewTimestamp(types.InstantToWall(v.Int(), loc)), nil
		}
		return types.NewTimestamp(types.WallToInstant(v.Int(), loc)), nil
	}}, nil
}
