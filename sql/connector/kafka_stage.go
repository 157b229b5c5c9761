package connector

import (
	"encoding/binary"
	"encoding/json"
	"fmt"

	"clink/engine"
	"clink/state"
)

// kafkaEpoch is the changes between two barriers of an exactly-once
// Kafka sink, staged until their checkpoint completes.
type kafkaEpoch struct {
	id      state.CheckpointID
	msgs    []kafkaMsg
	written bool // in a snapshot (pending or completed)
	chunks  int  // the state entries it was written as
}

// kafkaStageKeys tracks what the checkpoints hold of the staged epochs:
// published epochs' entries to delete, and per pending snapshot what it
// wrote, so a failed checkpoint's entries are sent again.
type kafkaStageKeys struct {
	del   []*kafkaEpoch
	snaps map[state.CheckpointID]kafkaSnap
}

type kafkaSnap struct{ wrote, deleted []*kafkaEpoch }

func (k *kafkaStageKeys) published(e *kafkaEpoch) {
	if e.written {
		k.del = append(k.del, e)
	}
}

// kafkaChunk bounds one state entry of staged messages.
const kafkaChunk = 1 << 20

func (s *KafkaSink) stageKey(suffix string) []byte {
	return []byte("kafka-sink/" + s.t.Name + "/" + suffix)
}

// SnapshotSink writes the epochs staged since the previous snapshot into
// checkpoint id, deletes the published ones, and rewrites the index.
func (s *KafkaSink) SnapshotSink(id state.CheckpointID) []engine.SinkEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mode != "exactly-once" {
		return nil
	}
	var out []engine.SinkEntry
	var snap kafkaSnap
	for _, e := range s.staged {
		if e.written {
			continue
		}
		chunks := encodeKafkaMsgs(e.msgs)
		for i, c := range chunks {
			out = append(out, engine.SinkEntry{Key: s.stageKey(fmt.Sprintf("%d/%d", e.id, i)), Value: c})
		}
		e.written, e.chunks = true, len(chunks)
		snap.wrote = append(snap.wrote, e)
	}
	for _, e := range s.stage.del {
		for i := 0; i < e.chunks; i++ {
			out = append(out, engine.SinkEntry{Key: s.stageKey(fmt.Sprintf("%d/%d", e.id, i)), Deleted: true})
		}
	}
	snap.deleted, s.stage.del = s.stage.del, nil
	idx := binary.AppendUvarint(nil, uint64(len(s.staged)))
	for _, e := range s.staged {
		idx = binary.AppendUvarint(idx, uint64(e.id))
		idx = binary.AppendUvarint(idx, uint64(e.chunks))
	}
	out = append(out, engine.SinkEntry{Key: s.stageKey("index"), Value: idx})
	if s.stage.snaps == nil {
		s.stage.snaps = map[state.CheckpointID]kafkaSnap{}
	}
	s.stage.snaps[id] = snap
	return out
}

// SinkCheckpointDone marks a failed checkpoint's entries to be sent again.
func (s *KafkaSink) SinkCheckpointDone(id state.CheckpointID, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap, ok := s.stage.snaps[id]
	delete(s.stage.snaps, id)
	if !ok || err == nil {
		return
	}
	for _, e := range snap.wrote {
		e.written = false
	}
	s.stage.del = append(s.stage.del, snap.deleted...)
}

// RestoreSink loads the epochs the restored checkpoint staged and
// publishes those the commit marker shows unpublished (their checkpoint
// completed, the crash came before their transaction committed).
func (s *KafkaSink) RestoreSink(read func(keys [][]byte) ([][]byte, error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mode != "exactly-once" {
		return nil
	}
	s.cur, s.staged, s.stage = nil, nil, kafkaStageKeys{}
	vals, err := read([][]byte{s.stageKey("index")})
	if err != nil {
		return fmt.Errorf("table %s: staged changes: %w", s.t.Name, err)
	}
	if vals[0] == nil {
		return nil
	}
	d := posDecoder{b: vals[0]}
	n := d.uint()
	var epochs []*kafkaEpoch
	for i := uint64(0); i < n && d.err == nil; i++ {
		epochs = append(epochs, &kafkaEpoch{id: state.CheckpointID(d.uint()), chunks: int(d.uint()), written: true})
	}
	if d.err != nil {
		return fmt.Errorf("table %s: staged changes: index is damaged", s.t.Name)
	}
	for _, e := range epochs {
		if e.id <= s.mark.Checkpoint {
			s.stage.del = append(s.stage.del, e) // published before the crash
			continue
		}
		keys := make([][]byte, e.chunks)
		for i := range keys {
			keys[i] = s.stageKey(fmt.Sprintf("%d/%d", e.id, i))
		}
		vals, err := read(keys)
		if err != nil {
			return fmt.Errorf("table %s: staged changes of checkpoint %d: %w", s.t.Name, e.id, err)
		}
		for i, v := range vals {
			if v == nil {
				return fmt.Errorf("table %s: staged changes of checkpoint %d: entry %d is missing", s.t.Name, e.id, i)
			}
			msgs, err := decodeKafkaMsgs(v)
			if err != nil {
				return fmt.Errorf("table %s: staged changes of checkpoint %d: %w", s.t.Name, e.id, err)
			}
			e.msgs = append(e.msgs, msgs...)
		}
		s.staged = append(s.staged, e)
	}
	if len(s.staged) == 0 {
		return nil
	}
	return s.publishLocked(s.restore, false, nil)
}

// encodeKafkaMsgs lays messages out in chunks of about kafkaChunk bytes:
// per message key and value (length + 1, 0 for nil) and the timestamp.
func encodeKafkaMsgs(msgs []kafkaMsg) [][]byte {
	var out [][]byte
	var b []byte
	for _, m := range msgs {
		b = appendNullable(b, m.key)
		b = appendNullable(b, m.value)
		b = binary.AppendVarint(b, m.ts)
		if len(b) >= kafkaChunk {
			out, b = append(out, b), nil
		}
	}
	if len(b) > 0 || len(out) == 0 {
		out = append(out, b)
	}
	return out
}

func appendNullable(b, v []byte) []byte {
	if v == nil {
		return binary.AppendUvarint(b, 0)
	}
	return append(binary.AppendUvarint(b, uint64(len(v))+1), v...)
}

func decodeKafkaMsgs(b []byte) ([]kafkaMsg, error) {
	var out []kafkaMsg
	for len(b) > 0 {
		var m kafkaMsg
		var ok bool
		if m.key, b, ok = readNullable(b); !ok {
			return nil, fmt.Errorf("staged message is damaged")
		}
		if m.value, b, ok = readNullable(b); !ok {
			return nil, fmt.Errorf("staged message is damaged")
		}
		ts, n := binary.Varint(b)
		if n <= 0 {
			return nil, fmt.Errorf("staged message is damaged")
		}
		m.ts, b = ts, b[n:]
		out = append(out, m)
	}
	return out, nil
}

func readNullable(b []byte) ([]byte, []byte, bool) {
	l, n := binary.Uvarint(b)
	if n <= 0 || l > uint64(len(b)-n)+1 {
		return nil, nil, false
	}
	b = b[n:]
	if l == 0 {
		return nil, b, true
	}
	return append([]byte(nil), b[:l-1]...), b[l-1:], true
}

// kafkaMarker is a commit marker: the newest checkpoint of run whose
// changes are in the topic, and whether the run's output is complete.
type kafkaMarker struct {
	Run        string             `json:"run"`
	Checkpoint state.CheckpointID `json:"checkpoint"`
	Final      bool               `json:"final,omitempty"`
}

func (m kafkaMarker) encode() []byte {
	b, _ := json.Marshal(m)
	return b
}

func decodeMarker(b []byte) (kafkaMarker, error) {
	var m kafkaMarker
	err := json.Unmarshal(b, &m)
	return m, err
}
