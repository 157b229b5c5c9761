package ops

import (
	"fmt"

	"clink/sql/types"
)

// Session window rows: SELECT * FROM TABLE(SESSION(...)) with no
// aggregate over it (SessionAggConfig.Rows). The operator keeps each
// partition's sessions and their rows exactly as for an aggregate; when
// the watermark passes a session's end it emits every row of the session
// with window_start, window_end and window_time appended, instead of one
// aggregated row. A row's session is only known then, so the rows wait in
// the state tier like an aggregate's.

// results renders what a session emits: its aggregated row, or with Rows
// each of its rows with the window columns appended.
func (s *SessionAggregate) results(group types.Row, ss session) ([]types.Row, error) {
	if !s.cfg.Rows {
		row, err := s.result(group, ss)
		if err != nil {
			return nil, err
		}
		return []types.Row{row}, nil
	}
	out := make([]types.Row, 0, len(ss.rows))
	end := ss.last + s.cfg.Gap
	for _, enc := range ss.rows {
		row, err := types.DecodeRow(enc)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.agg.name, err)
		}
		out = append(out, append(row, types.NewTimestamp(ss.start), types.NewTimestamp(end), types.NewTimestamp(end-1)))
	}
	return out, nil
}

// sameRows reports whether two results are equal row by row, kinds too.
func sameRows(a, b []types.Row) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if types.CompareRows(a[i], b[i]) != 0 || !sameKinds(a[i], b[i]) {
			return false
		}
	}
	return true
}
