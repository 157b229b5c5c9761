package connector

import (
	"encoding/binary"
	"fmt"
	"math"
)

// kafkaPosVersion starts a kafka source position; kafkaPosV1 positions
// (no watermarks) still restore.
const (
	kafkaPosV1      = 0xA1
	kafkaPosVersion = 0xA2
)

// Position is each partition's next offset, stop offset and watermark,
// inside the table's definition envelope (source_def.go); between the two
// changes of a debezium-json update it ends with the partition id + 1
// whose record at its next offset had its first change emitted. Every
// entry is per partition, so a restore at another scan.parallelism hands
// each partition to its new owner (SeekAll).
func (s *kafkaSource) Position() ([]byte, error) {
	b := []byte{kafkaPosVersion}
	b = binary.AppendUvarint(b, uint64(len(s.parts)))
	for _, p := range s.parts {
		b = binary.AppendUvarint(b, uint64(p.id))
		b = binary.AppendUvarint(b, uint64(p.next))
		b = binary.AppendUvarint(b, uint64(p.stop+1))
		b = binary.AppendVarint(b, p.wm)
	}
	if s.pending != nil {
		b = binary.AppendUvarint(b, uint64(s.pendPart.id)+1)
	}
	return s.t.wrapPosition(b), nil
}

// kafkaPartPos is one partition's entry in a kafka source position.
type kafkaPartPos struct {
	id         int32
	next, stop int64
	wm         int64
}

// decodeKafkaPos reads a position (inside its envelope): each partition's
// offsets and watermark, and the partition id + 1 of a half-emitted
// debezium update (0: none).
func (s *kafkaSource) decodeKafkaPos(pos []byte) ([]kafkaPartPos, uint64, error) {
	b, err := s.t.unwrapPosition(pos)
	if err != nil {
		return nil, 0, err
	}
	if len(b) < 1 || b[0] != kafkaPosVersion && b[0] != kafkaPosV1 {
		return nil, 0, fmt.Errorf("source %s: seek: not a kafka position", s.t.Name)
	}
	withWM := b[0] == kafkaPosVersion
	d := posDecoder{b: b[1:]}
	n := d.uint()
	var out []kafkaPartPos
	for i := uint64(0); i < n && d.err == nil; i++ {
		pp := kafkaPartPos{id: int32(d.uint()), next: int64(d.uint()), stop: int64(d.uint()) - 1, wm: math.MinInt64}
		if withWM && d.err == nil {
			v, k := binary.Varint(d.b)
			if k <= 0 {
				d.err = errFilePos
				break
			}
			pp.wm, d.b = v, d.b[k:]
		}
		if d.err == nil {
			out = append(out, pp)
		}
	}
	var half uint64
	if d.err == nil && len(d.b) != 0 {
		half = d.uint()
	}
	if d.err != nil || len(d.b) != 0 || n != uint64(len(out)) {
		return nil, 0, fmt.Errorf("source %s: seek: kafka position is damaged", s.t.Name)
	}
	return out, half, nil
}

// Seek resumes every partition at its checkpointed offsets and watermark;
// a partition the topic gained since is read from its first record.
// The position must be this subtask's own at the same scan.parallelism.
func (s *kafkaSource) Seek(pos []byte) error {
	return s.seek([][]byte{pos}, true)
}

// SeekAll resumes from the positions of every subtask of the checkpoint
// (engine.RescalableSource): each partition this subtask owns now (the
// same assignment as a fresh start) resumes at its checkpointed offsets
// and watermark, wherever it was read before; the others are their new
// owners'. A partition the checkpoint did not read (the topic gained it
// since) is read from its first record, as partition discovery would.
func (s *kafkaSource) SeekAll(positions [][]byte) error {
	return s.seek(positions, false)
}

// seek is Seek (own: the one position is this subtask's, so it reads
// only partitions this subtask owns, and every one but those the topic
// gained since) and SeekAll.
func (s *kafkaSource) seek(positions [][]byte, own bool) error {
	if s.cl != nil {
		return fmt.Errorf("source %s: seek after the first read", s.t.Name)
	}
	seen := map[int32]bool{}
	s.pending, s.half = nil, nil
	for _, pos := range positions {
		parts, half, err := s.decodeKafkaPos(pos)
		if err != nil {
			return err
		}
		for _, pp := range parts {
			if seen[pp.id] {
				return fmt.Errorf("source %s: seek: partition %d of topic %q is in two subtasks' positions (damaged checkpoint)", s.t.Name, pp.id, s.o.Topic)
			}
			seen[pp.id] = true
			if !s.topicHas(pp.id) {
				return fmt.Errorf("source %s: seek: the checkpoint read partition %d of topic %q, which the topic no longer has (was the topic recreated?)", s.t.Name, pp.id, s.o.Topic)
			}
			p := s.byID[pp.id]
			if p == nil && own {
				return fmt.Errorf("source %s: seek: the checkpoint read partition %d of topic %q, which this subtask does not (was the topic recreated?)", s.t.Name, pp.id, s.o.Topic)
			}
			if p != nil {
				p.next, p.stop, p.wm = pp.next, pp.stop, pp.wm
			}
		}
		if half != 0 {
			id := int32(half - 1)
			if !seen[id] {
				return fmt.Errorf("source %s: seek: kafka position is damaged", s.t.Name)
			}
			if p := s.byID[id]; p != nil {
				s.half = p
			}
		}
	}
	if own {
		if err := s.ownGap(seen); err != nil {
			return err
		}
	}
	for _, p := range s.parts {
		if !seen[p.id] {
			p.next = 0 // added to the topic after the checkpoint's start: read it all
		}
	}
	s.partChanged() // the restored partitions' watermarks
	return nil
}

// topicHas reports whether partition id was in the topic at open.
func (s *kafkaSource) topicHas(id int32) bool {
	for _, p := range s.topicParts {
		if p == id {
			return true
		}
	}
	return false
}

// ownGap fails a restore whose one position left out a partition this
// subtask owns that is older than one it read: the position was another
// assignment's (a checkpoint from before rescaling was recorded, taken at
// another scan.parallelism), and starting that partition afresh would
// read it twice.
func (s *kafkaSource) ownGap(seen map[int32]bool) error {
	top := int32(-1)
	for id := range seen {
		top = max(top, id)
	}
	for _, p := range s.parts {
		if !seen[p.id] && p.id < top {
			return fmt.Errorf("source %s: seek: the checkpoint has no offset for partition %d of topic %q (was it taken at another scan.parallelism? restore it at that one)", s.t.Name, p.id, s.o.Topic)
		}
	}
	return nil
}
