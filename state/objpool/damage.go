package objpool

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Every read of a run checks the object's size against its manifest entry
// and every byte it uses against a checksum: a damaged object fails the
// read with an error wrapping state.ErrCorrupt that names it, and nothing
// read from it is used. The error also names the newest checkpoint a
// restore can still use (see refuse).

// damageError marks a damaged object, so the pool can say which
// checkpoints predate it.
type damageError struct {
	key string
	err error
}

func (e *damageError) Error() string { return e.err.Error() }
func (e *damageError) Unwrap() error { return e.err }

// asDamage wraps err (about object key) as a damageError when it reports
// damage.
func asDamage(key string, err error) error {
	if err == nil || !errors.Is(err, errCorrupt) {
		return err
	}
	var de *damageError
	if errors.As(err, &de) {
		return err
	}
	return &damageError{key: key, err: err}
}

// joinedErrors is errors.Join on one line: "; " between the errors.
type joinedErrors []error

func (e joinedErrors) Error() string {
	s := make([]string, len(e))
	for i, err := range e {
		s[i] = err.Error()
	}
	return strings.Join(s, "; ")
}

func (e joinedErrors) Unwrap() []error { return e }

// joinErrors joins errs (nil when there are none, the error itself when
// there is one) into a one-line error that wraps them all.
func joinErrors(errs []error) error {
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	return joinedErrors(errs)
}

// readRun reads n bytes at off of run, failing with a damage error when
// the object is missing, shorter or longer than its manifest entry says.
func (p *Pool) readRun(ctx context.Context, run *RunRef, off, n int64) ([]byte, error) {
	data, size, err := p.store.GetRange(ctx, run.Key, off, n)
	switch {
	case errors.Is(err, ErrNotFound):
		return nil, asDamage(run.Key, fmt.Errorf("run %s: %w: the object is missing: %w", run.Key, errCorrupt, err))
	case errors.Is(err, ErrShort):
		return nil, asDamage(run.Key, fmt.Errorf("run %s: %w: %d bytes, the manifest says %d (cut short)", run.Key, errCorrupt, size, run.Size))
	case err != nil:
		return nil, fmt.Errorf("read run %s: %w", run.Key, err)
	case size >= 0 && size != run.Size:
		return nil, asDamage(run.Key, fmt.Errorf("run %s: %w: %d bytes, the manifest says %d", run.Key, errCorrupt, size, run.Size))
	}
	return data, nil
}

// readWholeRun reads and verifies a whole run (compaction, scans, small
// runs); the caller holds a request slot.
func (p *Pool) readWholeRun(ctx context.Context, run *RunRef) (*runIndex, []*block, error) {
	data, err := p.readRun(ctx, run, 0, run.Size)
	if err != nil {
		return nil, nil, err
	}
	x, blocks, err := parseRun(data, run)
	if err != nil {
		return nil, nil, asDamage(run.Key, fmt.Errorf("run %s: %w", run.Key, err))
	}
	return x, blocks, nil
}

// refuse completes err, from reading checkpoint m, when it reports a
// damaged object: it names the newest retained checkpoint older than the
// one that wrote the object (runs and hot keys are shared by the
// checkpoints after the one that wrote them; a manifest only by itself),
// which a restore can still use.
func (p *Pool) refuse(ctx context.Context, m *manifest, err error) error {
	var de *damageError
	if !errors.As(err, &de) {
		return err
	}
	written, ok := keyCheckpoint(de.key)
	if !ok {
		written = m.Checkpoint
	}
	for _, a := range m.Ancestors {
		if a.ID >= written {
			continue
		}
		if _, lerr := p.loadManifest(ctx, a.Manifest, a.ID, a.CRC); lerr == nil {
			return fmt.Errorf("%w; checkpoint %d is the newest that predates it: restore that one (--restore %d) or start over without --restore", err, a.ID, a.ID)
		}
	}
	return fmt.Errorf("%w; no retained checkpoint predates it: start over without --restore", err)
}
