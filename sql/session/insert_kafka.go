package session

import (
	"context"
	"errors"
	"fmt"

	"clink/sql/ast"
	"clink/sql/connector"
	"clink/sql/ops"
	"clink/state"
)

// insertKafka runs INSERT INTO a kafka / upsert-kafka table. Exactly-once
// (the default on a durable state URI) stages each checkpoint's changes in
// the checkpoint and commits them in a Kafka transaction when it
// completes (connector.KafkaSink), like insertFile's file sink; with
// Config.Resume the statement resumes from its checkpoint, or is skipped
// when an earlier run published its whole output.
func (s *Session) insertKafka(ctx context.Context, t *connector.Table, cols []int, st *ast.Insert) (*Result, error) {
	var ks *connector.KafkaSink
	setup := func(h *Handle) error {
		if len(h.Columns) != len(cols) {
			return ast.Errorf(st.Query.At, "query has %d columns, table %s takes %d", len(h.Columns), t.Name, len(cols))
		}
		if err := connector.KafkaSinkCheck(t, !h.Plan.Root.AppendOnly()); err != nil {
			return ast.Errorf(st.At, "%v", err)
		}
		var err error
		ks, err = connector.OpenKafkaSink(t, h.CheckpointName(), h.restoredFrom, Durable(s.cfg.StateURI))
		if err != nil {
			return err
		}
		if ks.Complete() {
			ks.Close()
			return errComplete
		}
		h.sink.Discard = true
		if sameLayout(h.Columns, t, cols) {
			h.sink.Tee = ks.Write
		} else {
			h.sink.Tee = func(ch ops.Change) { ks.Write(castChange(ch, t, cols)) }
		}
		h.sink.Stage = ks
		h.sink.OnBarrier = func(id state.CheckpointID, _ int) { ks.Barrier(id) }
		h.onCommit = ks.Committed
		h.onClose = append(h.onClose, func() error { ks.Close(); return nil })
		return nil
	}
	h, err := s.startWith(ctx, st.Query, "", startOpts{resume: s.cfg.Resume, setup: setup})
	if errors.Is(err, errComplete) {
		return message("%s is already complete (written by an earlier run)", t.Name), nil
	}
	if err != nil {
		return nil, err
	}
	defer h.Close()
	if err := h.waitEnd(ctx); err != nil {
		return nil, err
	}
	if err := ks.Finish(); err != nil {
		return nil, fmt.Errorf("table %s: %w", t.Name, err)
	}
	if from := h.RestoredFrom(); from > 0 {
		return message("wrote %d changes to %s (%s; resumed from checkpoint %d of %s)", h.sink.Len(), t.Name, ks.Mode(), from, h.CheckpointName()), nil
	}
	return message("wrote %d changes to %s (%s)", h.sink.Len(), t.Name, ks.Mode()), nil
}
