package connector

import (
	"encoding/binary"
	"fmt"
)

// kafkaPosVersion starts a kafka source position.
const kafkaPosVersion = 0xA1

// Position is each partition's next offset and stop offset, inside the
// table's definition envelope (source_def.go); between the two changes
// of a debezium-json update it ends with the partition id + 1 whose
// record at its next offset had its first change emitted.
func (s *kafkaSource) Position() ([]byte, error) {
	b := []byte{kafkaPosVersion}
	b = binary.AppendUvarint(b, uint64(len(s.parts)))
	for _, p := range s.parts {
		b = binary.AppendUvarint(b, uint64(p.id))
		b = binary.AppendUvarint(b, uint64(p.next))
		b = binary.AppendUvarint(b, uint64(p.stop+1))
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
}

// decodeKafkaPos reads a position (inside its envelope): each partition's
// offsets, and the partition id + 1 of a half-emitted debezium update (0:
// none).
func (s *kafkaSource) decodeKafkaPos(pos []byte) ([]kafkaPartPos, uint64, error) {
	b, err := s.t.unwrapPosition(pos)
	if err != nil {
		return nil, 0, err
	}
	if len(b) < 1 || b[0] != kafkaPosVersion {
		return nil, 0, fmt.Errorf("source %s: seek: not a kafka position", s.t.Name)
	}
	d := posDecoder{b: b[1:]}
	n := d.uint()
	var out []kafkaPartPos
	for i := uint64(0); i < n && d.err == nil; i++ {
		id, next, stop := int32(d.uint()), int64(d.uint()), int64(d.uint())-1
		if d.err == nil {
			out = append(out, kafkaPartPos{id, next, stop})
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

// Seek resumes every partition at its checkpointed offsets; a partition
// the topic gained since keeps its startup offset.
func (s *kafkaSource) Seek(pos []byte) error {
	if s.cl != nil {
		return fmt.Errorf("source %s: seek after the first read", s.t.Name)
	}
	parts, half, err := s.decodeKafkaPos(pos)
	if err != nil {
		return err
	}
	for _, pp := range parts {
		p := s.byID[pp.id]
		if p == nil {
			return fmt.Errorf("source %s: seek: the checkpoint read partition %d of topic %q, which this subtask does not (was the topic recreated?)", s.t.Name, pp.id, s.o.Topic)
		}
		p.next, p.stop = pp.next, pp.stop
	}
	s.pending, s.half = nil, nil
	if half != 0 {
		if s.half = s.byID[int32(half-1)]; s.half == nil {
			return fmt.Errorf("source %s: seek: kafka position is damaged", s.t.Name)
		}
	}
	return nil
}
