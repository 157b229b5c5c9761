package ops

import (
	"clink/sql/types"
)

// Allowed lateness of session windows. A fired session stays in its key's
// entry (marked fired) until the watermark passes its end - 1 + lateness.
// A row at or behind the watermark but less than the lateness behind it
// is late but kept: it may fall into a fired session, extend one, or
// bridge two. Its fold first brings the key's sessions up to the
// watermark seen at its arrival (advance: emitting and purging what that
// watermark's fire would have, so the async path, whose fire can still be
// queued behind the row at the key's gate, matches the synchronous one),
// then merges; the fired sessions it merged are retracted, and the merged
// session is emitted at once when its end - 1 is behind that watermark
// (-U old ... / +U new), else at its own fire (the old results -D now).
// A row within lateness can never reach a purged session: a purged
// session ended at least the lateness behind the watermark, and the row
// is less than that behind it, so it starts past the session's gap.

// lateApply is the apply of a late-but-kept row, judged against the
// watermark at its arrival (the operator's bound now, captured here).
func (s *SessionAggregate) lateApply() lateApply {
	wm := s.wm
	return func(ch Change, key, val []byte, found bool) error {
		return s.foldRow(ch, key, val, found, true, wm)
	}
}

// reemit retracts the fired sessions a late row merged and, when the
// merged session is due at the row's watermark, emits it; it reports
// whether the merged session counts as fired.
func (s *SessionAggregate) reemit(group types.Row, retract []session, merged session, due bool) (bool, error) {
	out := s.agg.ctx.Output
	var cur []types.Row
	if due {
		var err error
		if cur, err = s.results(group, merged); err != nil {
			return false, err
		}
	}
	var olds []types.Row
	for _, ss := range retract {
		rows, err := s.results(group, ss)
		if err != nil {
			return false, err
		}
		olds = append(olds, rows...)
	}
	if due && len(retract) == 1 && sameRows(olds, cur) {
		return true, nil // unchanged result
	}
	kind := Delete
	if due {
		kind = UpdateBefore
	}
	for _, row := range olds {
		out.Emit(Change{Kind: kind, Row: row})
	}
	if !due {
		return false, nil
	}
	kind = Insert
	if len(olds) > 0 {
		kind = UpdateAfter
	}
	for _, row := range cur {
		out.Emit(Change{Kind: kind, Row: row})
	}
	return true, nil
}
