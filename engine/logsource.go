package engine

import (
	"encoding/binary"
	"fmt"
	"sync"
)

// Log is an append-only, replayable input: what a Kafka topic is to a
// Flink job. Scenario inserts and tests append records and watermarks; a
// LogSource reads it from an offset, so a job restored from a checkpoint
// re-reads exactly what came after the checkpoint. Safe for concurrent use.
type Log[T any] struct {
	mu     sync.Mutex
	els    []Element[T]
	closed bool
}

// Append adds records.
func (l *Log[T]) Append(recs ...T) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range recs {
		l.els = append(l.els, Element[T]{Kind: Data, Data: r})
	}
}

// AppendWatermark adds a watermark.
func (l *Log[T]) AppendWatermark(wm int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.els = append(l.els, Element[T]{Kind: Watermark, Watermark: wm})
}

// Close marks the log complete: readers reaching the end see EndOfInput.
func (l *Log[T]) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
}

// Len returns the number of elements appended.
func (l *Log[T]) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.els)
}

func (l *Log[T]) at(i int) (Element[T], bool, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if i < len(l.els) {
		return l.els[i], true, false
	}
	return Element[T]{}, false, l.closed
}

// Source opens a reader of the log for a source stage. A log is one
// partition, so the source stage's parallelism must be 1.
func (l *Log[T]) Source(subtask, parallelism int) (Source[T], error) {
	if parallelism != 1 {
		return nil, fmt.Errorf("a log is one partition: source parallelism must be 1, got %d", parallelism)
	}
	return &LogSource[T]{log: l}, nil
}

// LogSource reads a Log from an offset; its position is the offset.
type LogSource[T any] struct {
	log *Log[T]
	off int
}

// Next returns the element at the offset, EndOfInput past the end of a
// closed log, or ok=false when the log has nothing more yet.
func (s *LogSource[T]) Next() (Element[T], bool, error) {
	el, ok, closed := s.log.at(s.off)
	if ok {
		s.off++
		return el, true, nil
	}
	if closed {
		return Element[T]{Kind: EndOfInput}, true, nil
	}
	return Element[T]{}, false, nil
}

// Position encodes the offset.
func (s *LogSource[T]) Position() ([]byte, error) {
	return binary.BigEndian.AppendUint64(nil, uint64(s.off)), nil
}

// Seek resumes at an encoded offset.
func (s *LogSource[T]) Seek(pos []byte) error {
	if len(pos) != 8 {
		return fmt.Errorf("log position: want 8 bytes, got %d", len(pos))
	}
	s.off = int(binary.BigEndian.Uint64(pos))
	return nil
}

// Offset is the next element's index.
func (s *LogSource[T]) Offset() int { return s.off }

// Close releases nothing.
func (s *LogSource[T]) Close() error { return nil }
