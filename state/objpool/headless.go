package objpool

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"clink/state"
)

// A damaged CURRENT hides which checkpoint is the newest, but every
// manifest is sealed and names its checkpoint, so the checkpoints are
// still there to restore by id. With CURRENT damaged:
//
//   - Latest fails (state.ErrCorrupt) naming CURRENT and listing the
//     intact checkpoints a LIST of manifests/ finds: "latest" is what
//     CURRENT said, and guessing it could resume a branch a rewind
//     abandoned or a fenced writer's uncommitted checkpoint;
//   - Restore(id) finds id's manifest by that LIST, and the restorer owns
//     the damaged CURRENT's ETag: its first commit replaces CURRENT with
//     If-Match on it, so a second restorer (or a writer that repaired
//     CURRENT meanwhile) is fenced exactly as with an intact CURRENT;
//   - ExpectLatest(state.LatestDamaged) pins the damaged CURRENT.

// maxScanManifests bounds how many manifests (the newest) a scan reads.
const maxScanManifests = 256

// scanned is what a LIST of manifests/ found: per checkpoint id the one
// intact manifest that is its checkpoint, and the ids whose manifests
// disagree (two writers' manifests of one id, neither or both named by
// another manifest).
type scanned struct {
	byID      map[state.CheckpointID]*manifest
	ambiguous map[state.CheckpointID][]string
}

// scanManifests lists and reads the newest manifests, keeping the intact
// ones. Of two manifests of one id (a fenced writer's leftover, or a
// branch a rewind abandoned) the one another manifest names as its
// ancestor is the committed one; if that does not decide, the id is
// ambiguous.
func (p *Pool) scanManifests(ctx context.Context) (scanned, error) {
	keys, err := p.store.List(ctx, "manifests/")
	if err != nil {
		return scanned{}, fmt.Errorf("list manifests/: %w", err)
	}
	type cand struct {
		id  state.CheckpointID
		key string
	}
	var cands []cand
	for _, k := range keys {
		if id, ok := keyCheckpoint(k); ok {
			cands = append(cands, cand{id, k})
		}
	}
	slices.SortFunc(cands, func(a, b cand) int { return -cmpID(a.id, b.id) })
	cands = cands[:min(len(cands), maxScanManifests)]
	all := map[state.CheckpointID][]*manifest{}
	named := map[string]bool{} // manifest key and CRC some manifest lists as an ancestor
	for _, c := range cands {
		m, err := p.loadManifest(ctx, c.key, c.id, 0)
		if err != nil {
			continue // damaged or gone since the LIST: not restorable
		}
		all[c.id] = append(all[c.id], m)
		for _, a := range m.Ancestors {
			named[a.Manifest+"#"+strconv.FormatUint(uint64(a.CRC), 10)] = true
		}
	}
	s := scanned{byID: map[state.CheckpointID]*manifest{}, ambiguous: map[state.CheckpointID][]string{}}
	for id, ms := range all {
		if len(ms) > 1 {
			ms = slices.DeleteFunc(slices.Clone(ms), func(m *manifest) bool {
				return !named[m.key+"#"+strconv.FormatUint(uint64(m.crc), 10)]
			})
		}
		if len(ms) == 1 {
			s.byID[id] = ms[0]
			continue
		}
		for _, m := range all[id] {
			s.ambiguous[id] = append(s.ambiguous[id], m.key)
		}
	}
	return s, nil
}

func cmpID(a, b state.CheckpointID) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// restorable is the ids a restore through a damaged CURRENT can offer,
// newest first: with Retain set, the newest Retain (older ones may be
// half collected).
func (s scanned) restorable(retain int) []state.CheckpointID {
	ids := make([]state.CheckpointID, 0, len(s.byID))
	for id := range s.byID {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b state.CheckpointID) int { return -cmpID(a, b) })
	if retain > 0 && len(ids) > retain {
		ids = ids[:retain]
	}
	return ids
}

func idList(ids []state.CheckpointID) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.FormatUint(uint64(id), 10)
	}
	return strings.Join(s, ", ")
}

// refuseCurrent completes err, a damaged CURRENT, with the checkpoints
// that can still be restored by id.
func (p *Pool) refuseCurrent(ctx context.Context, err error) error {
	s, lerr := p.scanManifests(ctx)
	if lerr != nil {
		return fmt.Errorf("%w; the manifests cannot be listed to find an intact checkpoint (%v): start over without --restore", err, lerr)
	}
	ids := s.restorable(p.cfg.Retain)
	if len(ids) == 0 {
		return fmt.Errorf("%w; no intact manifest is left: start over without --restore", err)
	}
	return fmt.Errorf("%w; CURRENT names the newest checkpoint, so --restore latest cannot tell which it is; "+
		"intact checkpoints (from their manifests), newest first: %s: restore one by id (--restore %d) or start over without --restore",
		err, idList(ids), ids[0])
}

// manifestBehindDamage finds checkpoint id's manifest when CURRENT (cerr)
// is damaged.
func (p *Pool) manifestBehindDamage(ctx context.Context, id state.CheckpointID, cerr error) (*manifest, error) {
	s, err := p.scanManifests(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w; restore checkpoint %d: the manifests cannot be listed: %w", cerr, id, err)
	}
	if m, ok := s.byID[id]; ok {
		return m, nil
	}
	if keys, ok := s.ambiguous[id]; ok {
		return nil, fmt.Errorf("objpool %s: restore checkpoint %d: CURRENT is damaged and %d manifests claim the checkpoint (%s), none named by a later one: %w",
			p, id, len(keys), strings.Join(keys, ", "), errCorrupt)
	}
	offer := "none"
	if ids := s.restorable(p.cfg.Retain); len(ids) > 0 {
		offer = idList(ids)
	}
	return nil, fmt.Errorf("objpool %s: checkpoint %d has no intact manifest (CURRENT is damaged: %v); restorable checkpoints: %s: %w",
		p, id, cerr, offer, state.ErrNoCheckpoint)
}

// expectDamaged is ExpectLatest on a damaged CURRENT (cerr, ETag etag):
// it pins it for state.LatestDamaged, and lets the writer that restored
// through it (and has not committed yet) confirm its own checkpoint.
func (p *Pool) expectDamaged(ctx context.Context, latest state.CheckpointID, etag string, cerr error) error {
	own := p.ownership()
	switch {
	case latest == state.LatestDamaged:
		p.mu.Lock()
		p.own = ownership{etag: etag, exists: true, pinned: true}
		p.mu.Unlock()
		return nil
	case own.set && own.etag == etag && own.id == latest:
		return nil
	}
	return p.refuseCurrent(ctx, cerr)
}

// errIsDamagedCurrent reports whether err, from readCurrent, is damage
// with an ETag to fence on.
func errIsDamagedCurrent(err error, etag string) bool {
	return err != nil && etag != "" && errors.Is(err, errCorrupt)
}
