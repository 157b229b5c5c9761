package session

import (
	"context"
	"errors"
	"fmt"

	"clink/engine"
	"clink/sql/connector"
	"clink/state"
)

// One process at a time owns a query's checkpoints: the pool fences every
// commit on the CURRENT its writer restored or last committed (objpool
// fence.go), a query that chose to restore the latest checkpoint checks
// before it touches anything that no other process committed since
// (guardRestore), a transactional file sink holds its output's lock for
// the whole run, and a query whose commit is fenced stops at once
// (stopOnCommit) without publishing. The sink publishes only checkpoints
// this process committed, and each checkpoint records what the output
// holds once it is published (connector.TxnRecordKey), so a restore
// verifies the output against the checkpoint.

// fenced is the error that stops a query another process took over.
func (h *Handle) fenced(err error) error {
	return fmt.Errorf("fenced: another process owns this query's checkpoints (%s): %w; this process stopped without publishing more output",
		h.CheckpointName(), err)
}

// guardRestore fails (fenced) unless the query's run still has the newest
// checkpoint chooseRun saw; the pool's next restore then fails if another
// process commits in between. It only reads.
func (h *Handle) guardRestore(ctx context.Context) error {
	if h.name == "" || h.factory == nil {
		return nil
	}
	g, ok := h.factory.Pool().(state.RestoreGuard)
	if !ok {
		return nil
	}
	if err := g.ExpectLatest(ctx, h.latestSeen); err != nil {
		if errors.Is(err, state.ErrFenced) {
			return h.fenced(err)
		}
		return err
	}
	return nil
}

// ExpectLatest forwards to the wrapped pool when it has the face, waiting
// out an outage as reads do (the end of an INSERT may meet one).
func (p *patientPool) ExpectLatest(ctx context.Context, latest state.CheckpointID) error {
	g, ok := p.RemotePool.(state.RestoreGuard)
	if !ok {
		return nil
	}
	return p.retry(ctx, func() error { return g.ExpectLatest(ctx, latest) })
}

// stopOnCommit is the failure that stops the query after a failed
// checkpoint commit, or nil to carry on (the next checkpoint retries): a
// fenced commit means another process owns the checkpoints, a damaged
// object that the state cannot be trusted.
func (h *Handle) stopOnCommit(info engine.CheckpointInfo) error {
	switch {
	case errors.Is(info.Err, state.ErrFenced):
		return h.fenced(info.Err)
	case errors.Is(info.Err, state.ErrCorrupt):
		return fmt.Errorf("checkpoint %d: %w", info.ID, info.Err)
	}
	return nil
}

// sinkRecord reads what checkpoint h.restoredFrom recorded about the
// query's transactional file sink (nil: nothing, or a fresh start).
func (h *Handle) sinkRecord(ctx context.Context) ([]byte, error) {
	if h.restoredFrom == 0 || h.factory == nil {
		return nil, nil
	}
	pool := h.factory.Pool()
	if err := pool.Restore(ctx, h.restoredFrom); err != nil {
		if errors.Is(err, state.ErrFenced) {
			return nil, h.fenced(err)
		}
		return nil, fmt.Errorf("restore checkpoint %d: %w", h.restoredFrom, err)
	}
	got, err := pool.GetMany(ctx, []state.Key{{Op: engine.SinkStateOp, Key: connector.TxnRecordKey}})
	if err != nil {
		return nil, fmt.Errorf("read the output record of checkpoint %d: %w", h.restoredFrom, err)
	}
	if !got[0].Found {
		return nil, nil
	}
	return got[0].Value, nil
}

// openTxnSink locks and opens the transactional file sink of an INSERT:
// the lock first (a second writer is fenced before it touches anything),
// then the restore guard, then the output is resumed against what the
// checkpoint recorded.
func (h *Handle) openTxnSink(ctx context.Context, t *connector.Table, cols []string) (*connector.TxnFileSink, error) {
	txn, err := connector.LockTxnFileSink(t, h.env(), cols, !h.Plan.Root.AppendOnly(), h.CheckpointName())
	if err != nil {
		return nil, err
	}
	err = h.guardRestore(ctx)
	var record []byte
	if err == nil {
		record, err = h.sinkRecord(ctx)
	}
	if err == nil {
		err = txn.Open(h.CheckpointName(), h.restoredFrom, record)
	}
	if err != nil {
		txn.Close()
		return nil, fmt.Errorf("table %s: %w", t.Name, err)
	}
	return txn, nil
}

// finalGuard checks, before an INSERT publishes its final output, that no
// other process committed since this one's last checkpoint.
func (h *Handle) finalGuard(ctx context.Context) error {
	if err := h.ckpt.failure(); err != nil {
		return err
	}
	if h.name == "" || h.factory == nil {
		return nil
	}
	g, ok := h.factory.Pool().(state.RestoreGuard)
	if !ok {
		return nil
	}
	if err := g.ExpectLatest(ctx, h.lastCheckpoint()); err != nil {
		if errors.Is(err, state.ErrFenced) {
			return h.fenced(err)
		}
		return err
	}
	return nil
}
