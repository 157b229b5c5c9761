package engine

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
)

// Flush pages the timers registered since the previous Flush into new run
// pages, writes the summary of every era whose runs changed, the
// directory of every group whose eras changed, and the clock of every
// group whose scalar changed. A watermark that fired nothing and left the
// scalar alone makes it write nothing. Call it at a checkpoint barrier,
// before the backend's capture.
func (t *Timers) Flush() error {
	for i := range t.groups {
		if err := t.flushGroup(&t.groups[i]); err != nil {
			return err
		}
	}
	return nil
}

func (t *Timers) flushGroup(g *tgroup) error {
	if len(g.pending) > 0 {
		if err := t.pageOut(g); err != nil {
			return err
		}
	}
	if g.v1 {
		ik, _ := t.placedKey(indexTagV1, 0, g.g)
		if err := t.be.Delete(t.op, ik); err != nil {
			return fmt.Errorf("timers: delete layout-1 index of key group %d: %w", g.g, err)
		}
		g.v1 = false
	}
	for _, x := range g.eras {
		if !x.dirty {
			continue
		}
		if err := t.be.Put(t.op, t.midKey(summaryTag, x.era, x.nonce), encodeEra(t.scr[:0], x)); err != nil {
			return fmt.Errorf("timers: write era summary of key group %d: %w", g.g, err)
		}
		x.dirty, x.stored = false, true
	}
	if err := t.flushDir(g); err != nil {
		return err
	}
	return t.flushClock(g)
}

// flushDir writes (or deletes) group g's directory when its eras changed.
func (t *Timers) flushDir(g *tgroup) error {
	if !g.dirDirty {
		return nil
	}
	var err error
	if len(g.eras) > 0 {
		err = t.be.Put(t.op, t.dirKey(g), encodeDir(t.scr[:0], g))
	} else if g.hasDir {
		err = t.be.Delete(t.op, t.dirKey(g))
	}
	if err != nil {
		return fmt.Errorf("timers: write directory of key group %d: %w", g.g, err)
	}
	g.hasDir, g.dirDirty = len(g.eras) > 0, false
	return nil
}

// flushClock writes group g's clock when the scalar or the directory's
// presence changed (and deletes it when neither is left to record).
func (t *Timers) flushClock(g *tgroup) error {
	want := clockVal{scalar: t.scalar, dir: g.hasDir}
	if want == g.clock && (g.hasClock || want.scalar == math.MinInt64) {
		return nil
	}
	var err error
	if want.scalar == math.MinInt64 && !want.dir {
		if g.hasClock {
			err = t.be.Delete(t.op, t.clockKey(g))
		}
	} else {
		flags := uint64(0)
		if want.dir {
			flags = 1
		}
		b := binary.AppendUvarint(t.scr[:0], timerLayout)
		b = binary.AppendUvarint(b, flags)
		t.scr = binary.AppendVarint(b, want.scalar)
		err = t.be.Put(t.op, t.clockKey(g), t.scr)
	}
	if err != nil {
		return fmt.Errorf("timers: write clock of key group %d: %w", g.g, err)
	}
	g.clock, g.hasClock = want, want.scalar != math.MinInt64 || want.dir
	return nil
}

// pageOut writes group g's pending timers as new runs: sorted by (ts,
// key), cut at time-bucket boundaries and every maxPageTimers.
func (t *Timers) pageOut(g *tgroup) error {
	ps := t.encBuf[:0]
	for pk := range g.pending {
		ps = append(ps, pendingTimer{ts: pendingTS(pk), key: pk[8:]})
	}
	slices.SortFunc(ps, func(a, b pendingTimer) int {
		if c := cmpInt(a.ts, b.ts); c != 0 {
			return c
		}
		return bytes.Compare([]byte(a.key), []byte(b.key))
	})
	for len(ps) > 0 {
		n, b := 1, floorDiv(ps[0].ts, t.width)
		for n < len(ps) && n < maxPageTimers && floorDiv(ps[n].ts, t.width) == b {
			n++
		}
		if err := t.writeRun(g, floorDiv(b, eraBuckets), ps[:n]); err != nil {
			return err
		}
		ps = ps[n:]
	}
	t.encBuf = ps[:0]
	clear(g.pending)
	g.pendMin = math.MaxInt64
	return nil
}

// writeRun stores ps (sorted, one bucket of era e) as one new run page of
// group g and adds it to the era's summary.
func (t *Timers) writeRun(g *tgroup, e int64, ps []pendingTimer) error {
	x := g.era(e)
	if err := t.loadEra(g, x); err != nil {
		return err
	}
	if x.nonce == 0 && !x.stored && len(x.runs) == 0 {
		_, x.nonce = t.placedKey(summaryTag, x.era, g.g)
	}
	r := trun{id: g.nextID, left: len(ps), next: ps[0].ts, last: ps[len(ps)-1].ts, fired: math.MinInt64}
	g.nextID++
	_, r.nonce = t.placedKey(runTag, r.id, g.g)
	b := binary.AppendUvarint(t.scr[:0], timerLayout)
	b = binary.AppendUvarint(b, uint64(len(ps)))
	for i, p := range ps {
		if i == 0 {
			b = binary.AppendVarint(b, p.ts)
		} else {
			b = binary.AppendUvarint(b, uint64(p.ts-ps[i-1].ts))
		}
		b = binary.AppendUvarint(b, uint64(len(p.key)))
		b = append(b, p.key...)
	}
	t.scr = b
	if err := t.be.Put(t.op, t.midKey(runTag, r.id, r.nonce), b); err != nil {
		return fmt.Errorf("timers: write page %d of key group %d: %w", r.id, g.g, err)
	}
	x.runs = append(x.runs, r)
	x.settle()
	x.dirty, g.dirDirty = true, true
	g.eraMin = min(g.eraMin, x.next)
	return nil
}

// encodeDir appends group g's directory value.
func encodeDir(b []byte, g *tgroup) []byte {
	b = binary.AppendUvarint(b, timerLayout)
	b = binary.AppendUvarint(b, g.nextID)
	b = binary.AppendUvarint(b, uint64(len(g.eras)))
	for _, x := range g.eras {
		b = binary.AppendVarint(b, int64(x.era))
		b = binary.AppendUvarint(b, x.nonce)
		b = binary.AppendUvarint(b, uint64(x.left))
		b = binary.AppendVarint(b, x.next)
	}
	return b
}

// decodeDir loads group g's eras (their summaries unread) from its
// directory value.
func decodeDir(g *tgroup, val []byte) error {
	rd := reader{b: val, ok: true}
	if v := rd.uvarint(); v != timerLayout && rd.ok {
		return fmt.Errorf("timers: key group %d: directory of timer layout %d", g.g, v)
	}
	g.nextID = rd.uvarint()
	n := rd.uvarint()
	g.eras = g.eras[:0]
	for i := uint64(0); i < n && rd.ok; i++ {
		x := &tera{era: uint64(rd.varint()), nonce: rd.uvarint(), left: int(rd.uvarint()), stored: true}
		x.next = rd.varint()
		g.eras = append(g.eras, x)
	}
	if !rd.ok {
		return fmt.Errorf("timers: corrupt directory of key group %d", g.g)
	}
	g.setEraMin()
	return nil
}

// encodeEra appends era x's summary value.
func encodeEra(b []byte, x *tera) []byte {
	b = binary.AppendUvarint(b, timerLayout)
	b = binary.AppendUvarint(b, uint64(len(x.runs)))
	for _, r := range x.runs {
		b = binary.AppendUvarint(b, r.id)
		b = binary.AppendUvarint(b, r.nonce)
		b = binary.AppendUvarint(b, uint64(r.left))
		b = binary.AppendVarint(b, r.next)
		b = binary.AppendVarint(b, r.last)
		b = binary.AppendVarint(b, r.fired)
	}
	return b
}

// decodeEra loads era x's runs from its summary value.
func decodeEra(x *tera, val []byte) error {
	rd := reader{b: val, ok: true}
	if rd.uvarint() != timerLayout {
		return fmt.Errorf("era summary of unknown layout")
	}
	n := rd.uvarint()
	x.runs = x.runs[:0]
	for i := uint64(0); i < n && rd.ok; i++ {
		r := trun{id: rd.uvarint(), nonce: rd.uvarint(), left: int(rd.uvarint())}
		r.next, r.last, r.fired = rd.varint(), rd.varint(), rd.varint()
		x.runs = append(x.runs, r)
	}
	if !rd.ok {
		return fmt.Errorf("corrupt era summary")
	}
	return nil
}
