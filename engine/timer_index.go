package engine

import (
	"encoding/binary"
	"fmt"

	"clink/state"
)

// Checkpointing timers. The pages, summaries, directories and clocks
// (timer_pages.go)
// are ordinary entries of the operator's backend: a checkpoint's delta
// carries only those that changed, a restore at any parallelism reads each
// owned group's clock and summary by key (no scan), and pages are read
// only when a watermark reaches them. Flush writes them at a checkpoint
// barrier (through Snapshotter), so the per-record path writes nothing.

// Snapshotter is an optional Operator interface: the runner calls
// SnapshotState at a checkpoint barrier, after the drain and before the
// capture, so the operator can write what it keeps outside keyed state
// (timer summaries, event-time scalars) into its backend.
type Snapshotter interface {
	SnapshotState(id state.CheckpointID) error
}

// timerIndexVersion tags layout 1's index entry (read on restore only).
const timerIndexVersion = 1

// Scalar is the operator-level event-time scalar (math.MinInt64 until set
// or restored).
func (t *Timers) Scalar() int64 { return t.scalar }

// SetScalar sets the operator-level event-time scalar saved with the timers
// at the next Flush (a late-drop bound: the largest watermark fired).
func (t *Timers) SetScalar(v int64) { t.scalar = v }

// Restore reads the clock (and, when it says there is one, the directory)
// of every key group this subtask owns from the restored checkpoint: no
// era summary or timer page is read until a watermark reaches it. The scalar is the largest any
// group saved. A group checkpointed in layout 1 (one index entry holding
// all its timers) is loaded whole and rewritten in layout 2 at the next
// Flush. Call it in Open after the backend restored; with nothing restored
// it reads nothing.
func (t *Timers) Restore() error {
	if pb, ok := t.be.(state.PersistBackend); !ok || pb.LastCheckpoint() == 0 {
		return nil
	}
	for i := range t.groups {
		if err := t.restoreGroup(&t.groups[i]); err != nil {
			return err
		}
	}
	return nil
}

func (t *Timers) restoreGroup(g *tgroup) error {
	val, found, err := t.be.Get(t.op, t.clockKey(g))
	if err != nil {
		return fmt.Errorf("timers: read clock of key group %d: %w", g.g, err)
	}
	if !found {
		return t.restoreV1(g)
	}
	rd := reader{b: val, ok: true}
	if v := rd.uvarint(); v != timerLayout && rd.ok {
		return fmt.Errorf("timers: key group %d: clock of timer layout %d, this build reads layouts 1 and %d", g.g, v, timerLayout)
	}
	flags, sc := rd.uvarint(), rd.varint()
	if !rd.ok {
		return fmt.Errorf("timers: corrupt clock of key group %d", g.g)
	}
	g.clock, g.hasClock = clockVal{scalar: sc, dir: flags&1 != 0}, true
	t.scalar = max(t.scalar, sc)
	if !g.clock.dir {
		return nil
	}
	val, found, err = t.be.Get(t.op, t.dirKey(g))
	if err != nil {
		return fmt.Errorf("timers: read directory of key group %d: %w", g.g, err)
	}
	if !found {
		return fmt.Errorf("timers: key group %d: its clock names a directory the checkpoint lacks", g.g)
	}
	g.hasDir = true
	return decodeDir(g, val)
}

// restoreV1 loads group g's layout-1 index entry, if any, into its pending
// timers, to be paged (and the entry deleted) at the next Flush.
func (t *Timers) restoreV1(g *tgroup) error {
	ik, _ := t.placedKey(indexTagV1, 0, g.g)
	val, found, err := t.be.Get(t.op, ik)
	if err != nil {
		return fmt.Errorf("timers: read index of key group %d: %w", g.g, err)
	}
	if !found {
		return nil
	}
	bad := fmt.Errorf("timers: corrupt index entry of key group %d", g.g)
	r := reader{b: val, ok: true}
	if r.uvarint() != timerIndexVersion {
		return bad
	}
	sc := r.varint()
	n := r.uvarint()
	for i := uint64(0); i < n && r.ok; i++ {
		key := r.bytes(r.uvarint())
		m := r.uvarint()
		for j := uint64(0); j < m && r.ok; j++ {
			ts := r.varint()
			t.scr = appendPendingKey(t.scr[:0], ts, key)
			g.add(t.scr, ts)
		}
	}
	if !r.ok {
		return bad
	}
	t.scalar = max(t.scalar, sc)
	g.v1 = true
	return nil
}

// reader decodes varint-framed bytes; ok turns false at the first error.
type reader struct {
	b  []byte
	ok bool
}

func (r *reader) uvarint() uint64 {
	if !r.ok {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.ok = false
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) varint() int64 {
	if !r.ok {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.ok = false
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) bytes(n uint64) []byte {
	if !r.ok || n > uint64(len(r.b)) {
		r.ok = false
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}
