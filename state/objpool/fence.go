package objpool

import (
	"context"
	"errors"
	"fmt"

	"clink/state"
)

// A writer owns the checkpoint chain from the CURRENT it restored or last
// committed: its next commit succeeds only if CURRENT is still exactly
// that object (same ETag), so any other process's commit in between
// fences it (state.ErrFenced), and a restore of an older checkpoint
// rewinds the chain at the restorer's first commit without a write at
// restore time. ExpectLatest pins the choice of checkpoint itself: a
// process that chose "latest" and finds a newer one committed meanwhile is
// fenced before it restores.

// ownership is what a pool knows about the CURRENT it owns.
type ownership struct {
	set    bool               // restored or committed: commits follow own, not CURRENT's checkpoint
	id     state.CheckpointID // the checkpoint this writer continues from
	m      *manifest          // its manifest
	etag   string             // CURRENT's ETag when this writer read or wrote it
	exists bool               // CURRENT existed then
	// pinned: ExpectLatest recorded etag and exists; a Restore before the
	// first commit must find CURRENT unchanged.
	pinned bool
}

var _ state.RestoreGuard = (*Pool)(nil)

// ExpectLatest fails with state.ErrFenced unless the newest committed
// checkpoint is latest (0: none), and pins CURRENT as it is now: a later
// Restore fails with state.ErrFenced if another writer commits in between.
// latest state.LatestDamaged expects a damaged CURRENT (headless.go). It
// only reads.
func (p *Pool) ExpectLatest(ctx context.Context, latest state.CheckpointID) error {
	if err := p.check(); err != nil {
		return err
	}
	cur, etag, exists, err := p.readCurrent(ctx)
	if errIsDamagedCurrent(err, etag) {
		return p.expectDamaged(ctx, latest, etag, err)
	}
	if err != nil {
		return err
	}
	if latest == state.LatestDamaged {
		return fmt.Errorf("objpool %s: CURRENT was damaged when this process chose a checkpoint, and is now at checkpoint %d: %w", p, cur.Checkpoint, state.ErrFenced)
	}
	if cur.Checkpoint != latest {
		return fmt.Errorf("objpool %s: checkpoint %d was committed after this process chose checkpoint %d: %w", p, cur.Checkpoint, latest, state.ErrFenced)
	}
	p.mu.Lock()
	p.own = ownership{etag: etag, exists: exists, pinned: true}
	p.mu.Unlock()
	return nil
}

// owned records that this writer now continues from m, read or written
// when CURRENT had ETag etag. A pinned pool must find CURRENT unchanged.
func (p *Pool) owned(m *manifest, etag string, exists bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.own.pinned && (etag != p.own.etag || exists != p.own.exists) {
		return fmt.Errorf("objpool %s: restore checkpoint %d: another process committed since this one chose it: %w", p, m.Checkpoint, state.ErrFenced)
	}
	p.served = m
	if m.Checkpoint != 0 {
		p.own = ownership{set: true, id: m.Checkpoint, m: m, etag: etag, exists: exists, pinned: p.own.pinned}
	}
	return nil
}

func (p *Pool) ownership() ownership {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.own
}

// commitParent is the manifest a commit of d builds on, given CURRENT as
// read (cur, etag, exists; rerr its decoding error): the owned checkpoint
// if this writer restored or committed one and CURRENT is unchanged since,
// else CURRENT's, which must be d.Parent.
func (p *Pool) commitParent(ctx context.Context, d *state.Delta, cur current, etag string, exists bool, rerr error) (*manifest, error) {
	own := p.ownership()
	if !own.set {
		if rerr != nil {
			return nil, fmt.Errorf("commit %d: %w", d.ID, rerr)
		}
		if cur.Checkpoint != d.Parent {
			return nil, fmt.Errorf("objpool %s: commit %d on parent %d, but CURRENT is %d: %w", p, d.ID, d.Parent, cur.Checkpoint, state.ErrFenced)
		}
		if !exists || cur.Checkpoint == 0 {
			return emptyManifest(p.cfg.Partitions), nil
		}
		m, err := p.loadManifest(ctx, cur.Manifest, cur.Checkpoint, cur.ManifestCRC)
		if err != nil {
			return nil, fmt.Errorf("commit %d: %w", d.ID, err)
		}
		return m, nil
	}
	// A damaged CURRENT is overwritten by the owner (its ETag is intact).
	if rerr != nil && (etag == "" || !errors.Is(rerr, errCorrupt)) {
		return nil, fmt.Errorf("commit %d: %w", d.ID, rerr)
	}
	if etag != own.etag || exists != own.exists {
		now := "gone"
		if exists {
			now = fmt.Sprintf("at checkpoint %d", cur.Checkpoint)
		}
		return nil, fmt.Errorf("objpool %s: commit %d: CURRENT changed since this writer restored or committed checkpoint %d (now %s): %w",
			p, d.ID, own.id, now, state.ErrFenced)
	}
	if d.Parent != own.id {
		return nil, fmt.Errorf("objpool %s: commit %d on parent %d, but this writer continues from checkpoint %d: %w", p, d.ID, d.Parent, own.id, state.ErrFenced)
	}
	return own.m, nil
}
