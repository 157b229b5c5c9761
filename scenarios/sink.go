package scenarios

import (
	"fmt"
	"sort"
	"strings"

	"clink/engine/counter"
	"clink/state"
)

// change is one output the sink received.
type change struct {
	seq         int // arrival order, across incarnations
	incarnation int
	key         string
	value       int64
	prev        int64
	insert      bool // the key's first live output
	rolledBack  bool // undone by a restore to an earlier checkpoint
}

// collector is the job's sink. It keeps every output in arrival order and
// an exactly-once view: a restore rolls each key back to the outputs of the
// records its checkpoint covered (the counter emits one output per record).
type collector struct {
	all         []*change
	byKey       map[string][]*change // live outputs per key
	watermark   int64
	hasWM       bool
	ended       bool
	incarnation int
}

func newCollector() *collector { return &collector{byKey: map[string][]*change{}} }

// Emit records a running total.
func (c *collector) Emit(r counter.Rec) {
	k := string(r.Key)
	live := c.byKey[k]
	ch := &change{seq: len(c.all) + 1, incarnation: c.incarnation, key: k, value: r.Value, insert: len(live) == 0}
	if len(live) > 0 {
		ch.prev = live[len(live)-1].value
	}
	c.all = append(c.all, ch)
	c.byKey[k] = append(live, ch)
}

// EmitWatermark records the sink's watermark.
func (c *collector) EmitWatermark(wm int64) { c.watermark, c.hasWM = wm, true }

// EmitBarrier needs nothing: rollback is computed from source positions.
func (c *collector) EmitBarrier(state.CheckpointID) {}

// EndOfInput records that the input ended.
func (c *collector) EndOfInput() { c.ended = true }

// rollback keeps, per key, only the first keep[key] live outputs.
func (c *collector) rollback(keep map[string]int) int {
	n := 0
	for k, live := range c.byKey {
		want := keep[k]
		if len(live) <= want {
			continue
		}
		for _, ch := range live[want:] {
			ch.rolledBack = true
			n++
		}
		if want == 0 {
			delete(c.byKey, k)
		} else {
			c.byKey[k] = live[:want]
		}
	}
	c.watermark, c.hasWM, c.ended = 0, false, false
	return n
}

func (ch *change) String() string {
	if ch.insert {
		return fmt.Sprintf("+I %s=%d", ch.key, ch.value)
	}
	return fmt.Sprintf("+U %s=%d (was %d)", ch.key, ch.value, ch.prev)
}

// changelog renders the live outputs in arrival order (or grouped by key),
// or every output with rolled-back ones marked when raw.
func (c *collector) changelog(byKey, raw bool) string {
	var list []*change
	for _, ch := range c.all {
		if raw || !ch.rolledBack {
			list = append(list, ch)
		}
	}
	if byKey {
		sort.SliceStable(list, func(i, j int) bool { return list[i].key < list[j].key })
	}
	var b strings.Builder
	for _, ch := range list {
		fmt.Fprintf(&b, "%s", ch)
		if raw && ch.rolledBack {
			b.WriteString("  [rolled back]")
		}
		b.WriteByte('\n')
	}
	if b.Len() == 0 {
		return "(empty)\n"
	}
	return b.String()
}

// table renders the materialised result: each key's latest live total.
func (c *collector) table() string {
	keys := make([]string, 0, len(c.byKey))
	for k := range c.byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		live := c.byKey[k]
		fmt.Fprintf(&b, "%s %d\n", k, live[len(live)-1].value)
	}
	if b.Len() == 0 {
		return "(empty)\n"
	}
	return b.String()
}

// perKey returns each key's live totals in order (the oracle compares it).
func (c *collector) perKey() map[string][]int64 {
	out := map[string][]int64{}
	for k, live := range c.byKey {
		for _, ch := range live {
			out[k] = append(out[k], ch.value)
		}
	}
	return out
}

// live counts the outputs no restore rolled back.
func (c *collector) live() int {
	n := 0
	for _, l := range c.byKey {
		n += len(l)
	}
	return n
}

func (c *collector) watermarkText() string {
	if !c.hasWM {
		return "none"
	}
	return fmt.Sprint(c.watermark)
}
