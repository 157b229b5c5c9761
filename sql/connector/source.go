package connector

import (
	"fmt"

	"clink/engine"
	"clink/sql/ops"
	"clink/state"
)

// Next returns the next element.
func (s *Source) Next() (engine.Element[ops.Change], bool, error) {
	if s.ext != nil {
		return s.extNext()
	}
	switch s.state {
	case 1:
		s.state = 2
		return engine.Element[ops.Change]{Kind: engine.EndOfInput}, true, nil
	case 2:
		return engine.Element[ops.Change]{}, false, nil
	}
	if s.wmDue {
		s.wmDue = false
		return engine.Element[ops.Change]{Kind: engine.Watermark, Watermark: s.wm}, true, nil
	}
	if s.proc != nil {
		if el, ok := s.proc.take(); ok {
			return el, true, nil
		}
	}
	row, ok, end, err := s.r.next()
	if err != nil {
		return engine.Element[ops.Change]{}, false, fmt.Errorf("source %s: %w", s.table.Name, err)
	}
	if end {
		s.state = 1
		return engine.Element[ops.Change]{Kind: engine.Watermark, Watermark: FinalWatermark}, true, nil
	}
	if !ok {
		if s.proc != nil {
			if el, ok := s.proc.quiet(); ok {
				return el, true, nil
			}
		}
		if s.idle.quiet() {
			return engine.Element[ops.Change]{Kind: engine.Watermark, Watermark: engine.WatermarkIdle}, true, nil
		}
		return engine.Element[ops.Change]{}, false, nil
	}
	s.idle.active()
	if row, err = s.table.Extend(row, s.clock.Now()); err != nil {
		return engine.Element[ops.Change]{}, false, fmt.Errorf("source %s: %w", s.table.Name, err)
	}
	if w := s.watermark; w != nil {
		v, err := w.Eval(row)
		if err != nil {
			return engine.Element[ops.Change]{}, false, fmt.Errorf("source %s: watermark: %w", s.table.Name, err)
		}
		if !v.IsNull() && v.Int() > s.wm {
			s.wm = v.Int()
			s.wmDue = true
		}
	}
	if s.proc != nil {
		s.proc.row(row)
	}
	kind := ops.Insert
	if s.kinds != nil { // a values table's DELETE / UPDATE
		kind = s.kinds.lastKind()
	}
	return engine.Element[ops.Change]{Kind: engine.Data, Data: ops.Change{Kind: kind, Row: row}}, true, nil
}

// extNext is Next of an external source (kafka), with the processing
// time of a PROCTIME attribute added.
func (s *Source) extNext() (engine.Element[ops.Change], bool, error) {
	if s.proc == nil {
		return s.ext.Next()
	}
	if el, ok := s.proc.take(); ok {
		return el, true, nil
	}
	el, ok, err := s.ext.Next()
	if err != nil {
		return el, ok, err
	}
	s.proc.after(el, ok)
	if !ok {
		if el, ok := s.proc.quiet(); ok {
			return el, true, nil
		}
	}
	return el, ok, nil
}

// Position is the reader's position (the watermark is re-derived), with
// the table's definition (source_def.go).
func (s *Source) Position() ([]byte, error) {
	if s.ext != nil {
		return s.ext.Position()
	}
	return s.table.wrapPosition(s.r.position()), nil
}

// Seek resumes the reader at a checkpointed position; a position saved
// under another definition of the table is refused.
func (s *Source) Seek(pos []byte) error {
	if s.ext != nil {
		return s.ext.Seek(pos)
	}
	pos, err := s.table.unwrapPosition(pos)
	if err != nil {
		return err
	}
	if err := s.r.seek(pos); err != nil {
		return fmt.Errorf("source %s: seek: %w", s.table.Name, err)
	}
	return nil
}

// CheckpointComplete tells a source that acts on completed checkpoints
// (engine.CheckpointListener: a kafka source commits its group offsets)
// that checkpoint id, which recorded pos, completed.
func (s *Source) CheckpointComplete(id state.CheckpointID, pos []byte) {
	if l, ok := s.ext.(engine.CheckpointListener); ok {
		l.CheckpointComplete(id, pos)
	}
}

// SeekAll resumes a source restored at another parallelism from every
// old subtask's position (engine.RescalableSource); only a kafka source's
// positions can be redistributed.
func (s *Source) SeekAll(positions [][]byte) error {
	if r, ok := s.ext.(engine.RescalableSource); ok {
		return r.SeekAll(positions)
	}
	return fmt.Errorf("source %s: its position cannot be redistributed over another parallelism", s.table.Name)
}

// Close releases the reader.
func (s *Source) Close() error {
	if s.ext != nil {
		return s.ext.Close()
	}
	return s.r.close()
}

// SourceParallelism is how many subtasks scan table t: a kafka table's
// scan.parallelism, 1 for every other connector.
func SourceParallelism(t *Table) int {
	if t.Connector == "kafka" || t.Connector == "upsert-kafka" {
		if o, err := ParseKafka(t); err == nil {
			return o.Parallelism
		}
	}
	return 1
}

// Open makes the source of table t for one query.
func Open(t *Table, env Env) (*Source, error) {
	var (
		r   rowReader
		err error
	)
	switch t.Connector {
	case "values":
		r, err = openValues(t, env)
	case "nexmark":
		r, err = openNexmark(t, env)
	case "csv":
		r, err = openCSV(t, env)
	case "jsonl":
		if Changelog(t) {
			r, err = openDebeziumFile(t, env)
		} else {
			r, err = openJSONL(t, env)
		}
	case "datagen":
		r, err = openDatagen(t, env)
	case "kafka", "upsert-kafka":
		k, err := openKafka(t, env)
		if err != nil {
			return nil, err
		}
		return &Source{table: t, ext: k, proc: openProcTime(t, env)}, nil
	default:
		return nil, fmt.Errorf("table %s: connector %q cannot be read", t.Name, t.Connector)
	}
	if err != nil {
		return nil, err
	}
	src := newSource(t, r)
	src.watermark = env.RowErrors.NonStrict(t.Watermark, "WATERMARK of "+t.Name)
	src.clock, src.proc = procClock(env), openProcTime(t, env)
	if src.idle, err = openIdleness(t, env); err != nil {
		_ = r.close()
		return nil, err
	}
	return src, nil
}
