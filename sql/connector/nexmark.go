package connector

import (
	"encoding/binary"
	"errors"
	"strings"
	"time"

	"clink/engine/async"
	"clink/sql/nexmark"
	"clink/sql/types"
)

// nexmarkReader emits the rows of one Nexmark table (person, auction or
// bid) from the deterministic generator; its position is the event index.
type nexmarkReader struct {
	gen   *nexmark.Generator
	kind  nexmark.Kind
	cols  []int // table column -> generator column
	rate  float64
	clock async.Clock
	start time.Time
	from  int64
}

// NexmarkTable returns the generator table a nexmark table reads: option
// 'table' (or 'nexmark.table'), else the table's own name.
func NexmarkTable(t *Table) (string, error) {
	name, ok := t.Opt("table")
	if !ok {
		name, ok = t.Opt("nexmark.table")
	}
	if !ok {
		name = t.Name
	}
	name = strings.ToLower(name)
	if _, err := nexmark.Columns(name); err != nil {
		return "", t.OptErr("table", "nexmark tables are person, auction and bid, got %q", name)
	}
	return name, nil
}

func nexmarkColumns(t *Table) (nexmark.Kind, []int, error) {
	name, err := NexmarkTable(t)
	if err != nil {
		return 0, nil, err
	}
	all, _ := nexmark.Columns(name)
	kind := map[string]nexmark.Kind{"person": nexmark.KindPerson, "auction": nexmark.KindAuction, "bid": nexmark.KindBid}[name]
	cols := make([]int, len(t.Columns))
	for i, c := range t.Columns {
		cols[i] = -1
		for k, g := range all {
			if strings.EqualFold(g.Name, c.Name) {
				cols[i] = k
			}
		}
		if cols[i] < 0 {
			return 0, nil, errorAt(t, i, "nexmark %s has no column %s", name, c.Name)
		}
	}
	return kind, cols, nil
}

func openNexmark(t *Table, env Env) (rowReader, error) {
	kind, cols, err := nexmarkColumns(t)
	if err != nil {
		return nil, err
	}
	events, err := t.IntOpt("events", 0)
	if err != nil {
		return nil, err
	}
	seed, err := t.IntOpt("seed", 0)
	if err != nil {
		return nil, err
	}
	rate, err := t.FloatOpt("rate", 0)
	if err != nil {
		return nil, err
	}
	eps, err := t.FloatOpt("events_per_second", 0)
	if err != nil {
		return nil, err
	}
	cfg := nexmark.Config{Events: events, Seed: seed, EventsPerSecond: eps}
	r := &nexmarkReader{gen: nexmark.New(cfg), kind: kind, cols: cols, rate: rate, clock: env.Clock}
	return r, nil
}

func (r *nexmarkReader) next() (types.Row, bool, bool, error) {
	for {
		if r.rate > 0 && r.clock != nil && !r.due() {
			return nil, false, false, nil
		}
		ev, ok := r.gen.Next()
		if !ok {
			return nil, false, true, nil
		}
		if ev.Kind != r.kind {
			continue
		}
		full := ev.Row()
		row := make(types.Row, len(r.cols))
		for i, c := range r.cols {
			row[i] = full[c]
		}
		return row, true, false, nil
	}
}

// due paces the generator at rate events per second of the clock.
func (r *nexmarkReader) due() bool {
	now := r.clock.Now()
	if r.start.IsZero() {
		r.start, r.from = now, r.gen.Position()
	}
	allowed := int64(now.Sub(r.start).Seconds()*r.rate) + 1
	return r.gen.Position()-r.from < allowed
}

func (r *nexmarkReader) position() []byte {
	return binary.BigEndian.AppendUint64(nil, uint64(r.gen.Position()))
}

func (r *nexmarkReader) seek(pos []byte) error {
	if len(pos) != 8 {
		return errors.New("nexmark position: want 8 bytes")
	}
	r.start = time.Time{}
	return r.gen.SetPosition(int64(binary.BigEndian.Uint64(pos)))
}

func (r *nexmarkReader) close() error { return nil }
