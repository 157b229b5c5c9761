package session

import (
	"context"

	"clink/sql/ast"
	"clink/sql/connector"
)

// insertKafka runs INSERT INTO a kafka / upsert-kafka table. Exactly-once
// (the default on a durable state URI) stages each checkpoint's changes in
// the checkpoint and commits them in a Kafka transaction when it
// completes (connector.KafkaSink), like insertFile's file sink; with
// Config.Resume the statement resumes from its checkpoint, or is skipped
// when an earlier run published its whole output.
func (s *Session) insertKafka(ctx context.Context, t *connector.Table, cols []int, st *ast.Insert) (*Result, error) {
	return s.insertStaged(ctx, t, cols, st, func(h *Handle) (stagedSink, string, error) {
		if err := connector.KafkaSinkCheck(t, !h.Plan.Root.AppendOnly()); err != nil {
			return nil, "", ast.Errorf(st.At, "%v", err)
		}
		ks, err := connector.OpenKafkaSink(t, h.CheckpointName(), h.restoredFrom, Durable(s.cfg.StateURI), h.kafkaOutage())
		if err != nil {
			return nil, "", err
		}
		return ks, ks.Mode(), nil
	})
}
