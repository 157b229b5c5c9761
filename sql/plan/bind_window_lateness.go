package plan

import (
	"fmt"
	"strings"
	"time"

	"clink/sql/connector"
)

// AllowedLatenessOption names the allowed lateness of event-time windows,
// both the session setting (SET 'window.allowed-lateness' = '2s') and the
// source table option that overrides it for windows over that table's
// time attribute. Rows up to this far behind the watermark still count:
// a window fires when the watermark passes its end, as without lateness,
// a late row within the lateness updates the fired result (-U old / +U
// new, so the window's output is updating), and the window's state is
// purged once the watermark passes end + lateness. 0 (the default) emits
// each window once and drops every later row: the output is append-only.
const AllowedLatenessOption = "window.allowed-lateness"

// ParseLateness reads an allowed lateness: a non-negative Go duration
// ('2s', '500ms'), in whole milliseconds; the error names the option.
func ParseLateness(s string) (int64, error) {
	s = strings.TrimSpace(s)
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%s: want a duration such as '2s' or '500ms', got %q", AllowedLatenessOption, s)
	}
	if d < 0 {
		return 0, fmt.Errorf("%s: must not be negative, got %q", AllowedLatenessOption, s)
	}
	return d.Milliseconds(), nil
}

// tableLateness reads a table's allowed lateness option (set false when
// the table does not have it); a bad value is a positioned error naming
// the option.
func tableLateness(t *connector.Table) (ms int64, set bool, err error) {
	s, ok := t.Opt(AllowedLatenessOption)
	if !ok {
		return 0, false, nil
	}
	ms, err = ParseLateness(s)
	if err != nil {
		return 0, false, t.OptErr(AllowedLatenessOption, "want a non-negative duration such as '2s' or '500ms', got %q", s)
	}
	return ms, true, nil
}

// SetAllowedLateness sets the session's default allowed lateness (ms) of
// the windows of later queries; a table's own option wins.
func (c *Catalog) SetAllowedLateness(ms int64) { c.lateness = ms }

// AllowedLateness is the session's default allowed lateness (ms).
func (c *Catalog) AllowedLateness() int64 { return c.lateness }

// windowLateness is the allowed lateness of a window aggregate over the
// window node w: the largest of the option of the source tables its time
// column traces to, each table without the option counting the session
// default.
func (b *binder) windowLateness(w *Node) int64 {
	tables := timeTables(w.Inputs[0], w.Window.TimeCol)
	if len(tables) == 0 {
		return b.cat.lateness
	}
	out := int64(0)
	for _, t := range tables {
		ms, set, err := tableLateness(t)
		if err != nil || !set { // checked at CREATE TABLE
			ms = b.cat.lateness
		}
		out = max(out, ms)
	}
	return out
}

// timeTables lists the source tables a time attribute (column idx of n)
// comes from, following timeAttr's path; a window's rowtime (a cascade)
// yields none.
func timeTables(n *Node, idx int) []*connector.Table {
	for depth := 0; depth < 1024; depth++ {
		if idx < 0 || idx >= len(n.Schema.Cols) {
			return nil
		}
		switch n.Op {
		case OpScan:
			return []*connector.Table{n.Table}
		case OpCalc:
			j, ok := projSource(n.Projs[0], idx)
			if !ok {
				return nil
			}
			n, idx = n.Inputs[0], j
		case OpUnion:
			var out []*connector.Table
			for k, in := range n.Inputs {
				if j, ok := projSource(n.Projs[k], idx); ok {
					out = append(out, timeTables(in, j)...)
				}
			}
			return out
		case OpWindow, OpOver:
			if idx >= len(n.Inputs[0].Schema.Cols) {
				return nil
			}
			n = n.Inputs[0]
		default:
			return nil
		}
	}
	return nil
}

// latenessDetail is EXPLAIN's note on a window aggregate with a lateness.
func latenessDetail(ms int64) string {
	return fmt.Sprintf("allowed lateness %s: updating (late rows -U/+U fired windows)", time.Duration(ms)*time.Millisecond)
}
