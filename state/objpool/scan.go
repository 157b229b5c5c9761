package objpool

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"slices"

	"clink/state"
)

var _ state.KeyGroupScanner = (*Pool)(nil)

// ScanKeyGroups calls fn for every live entry of the served checkpoint whose
// key group (the Entry.KeyGroup it was committed with) lies in [lo, hi), one
// partition at a time in key order. It reads every run: it is the eager
// restore path, not the lazy one.
func (p *Pool) ScanKeyGroups(ctx context.Context, lo, hi int, fn func(state.Entry) error) error {
	if err := p.check(); err != nil {
		return err
	}
	m := p.servedManifest()
	for part, runs := range m.Runs {
		live := map[string]record{}
		for i := len(runs) - 1; i >= 0; i-- {
			if err := p.scanRun(ctx, &runs[i], live); err != nil {
				return p.refuse(ctx, m, fmt.Errorf("objpool %s: scan checkpoint %d partition %d: %w", p, m.Checkpoint, part, err))
			}
		}
		recs := make([]record, 0, len(live))
		for _, r := range live {
			if !r.deleted && r.keyGroup >= lo && r.keyGroup < hi {
				recs = append(recs, r)
			}
		}
		slices.SortFunc(recs, func(a, b record) int { return bytes.Compare(a.ik, b.ik) })
		for _, r := range recs {
			e := state.Entry{
				Key:      state.Key{Op: state.OpID(binary.BigEndian.Uint32(r.ik)), Key: append([]byte{}, r.ik[4:]...)},
				KeyGroup: r.keyGroup,
				Value:    append([]byte{}, r.value...),
			}
			if err := fn(e); err != nil {
				return err
			}
		}
	}
	return nil
}

// scanRun overlays one whole run onto live.
func (p *Pool) scanRun(ctx context.Context, run *RunRef, live map[string]record) error {
	if err := p.acquire(ctx); err != nil {
		return err
	}
	_, blocks, err := p.readWholeRun(ctx, run)
	p.release()
	if err != nil {
		return err
	}
	for _, b := range blocks {
		recs, err := b.records()
		if err != nil {
			return asDamage(run.Key, fmt.Errorf("run %s: %w", run.Key, err))
		}
		for _, r := range recs {
			if len(r.ik) >= 4 {
				live[string(r.ik)] = r
			}
		}
	}
	return nil
}
