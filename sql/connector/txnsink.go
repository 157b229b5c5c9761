package connector

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"clink/engine"
	"clink/sql/ops"
	"clink/state"
)

// keepEntries bounds the commit history a TxnFileSink's marker keeps (the
// oldest checkpoint a restore can rewind the output to).
const keepEntries = 256

// TxnFileSink writes a query's changes to a CSV or JSONL file exactly once
// across crashes, in two phases:
//
//  1. the changes since the previous barrier stream (buffered) into a
//     temporary file in PATH.clink-staging; at each checkpoint's barrier
//     (before the checkpoint commits) it is fsync'd and renamed
//     <checkpoint>.part, so memory never holds more than a buffer, and the
//     checkpoint records the length and CRC-32C the output will have once
//     it is published (Record);
//  2. when the checkpoint completes, every staged part up to it is appended
//     to PATH in order (checked against what was staged), PATH is fsync'd,
//     and the commit record PATH.clink-commit (atomically replaced, sealed
//     with a CRC-32C) records the checkpoint and PATH's length and CRC-32C.
//
// Restoring checkpoint C verifies PATH against the commit record, truncates
// it to the length recorded for the newest published checkpoint <= C,
// publishes the staged parts up to C (checked against what C recorded)
// and drops the rest, so PATH never holds a change twice or misses one; a
// missing or damaged record, or an output cut short, extended or edited,
// fails with an error instead. A fresh run leaves PATH untouched until its
// first publish. One process at a time writes PATH: the sink holds a lock
// (PATH.clink-staging/LOCK) from Lock to Close.
type TxnFileSink struct {
	mu       sync.Mutex
	path     string
	stage    string
	enc      *FileSink
	out      *partWriter
	header   []byte
	mark     commitMarker
	fresh    bool
	staged   []stagedPart
	err      error
	lockFile *os.File
	// published is the output as published (fresh: its header, still to
	// be written); staging extends it with every change staged since.
	published, staging outputSum
	size               int64 // the output's size when the restore found it
}

// stagedPart is a sealed part and the output's sum once it is published.
type stagedPart struct {
	id  state.CheckpointID
	sum outputSum
}

// partWriter is what the encoder writes to: the header into a buffer at
// first, then the temporary part file of the changes since the last
// barrier, created by the first write after it. It adds what it writes to
// sum.
type partWriter struct {
	dir     string
	capture *bytes.Buffer
	f       *os.File
	sum     *outputSum
}

func (p *partWriter) Write(b []byte) (int, error) {
	if p.capture != nil {
		return p.capture.Write(b)
	}
	if p.f == nil {
		f, err := os.CreateTemp(p.dir, ".tmp-*")
		if err != nil {
			return 0, fmt.Errorf("staging: %w", err)
		}
		p.f = f
	}
	n, err := p.f.Write(b)
	*p.sum = p.sum.add(b[:n])
	return n, err
}

// seal makes the part written so far durable as path (an empty part when
// nothing was written) and starts the next one.
func (p *partWriter) seal(path string) error {
	if p.f == nil {
		return writeDurable(path, nil)
	}
	f := p.f
	p.f = nil
	if err := errors.Join(f.Sync(), f.Close()); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return err
	}
	return syncDir(filepath.Dir(path))
}

// discard drops the unsealed part (a crash would have lost it too).
func (p *partWriter) discard() {
	if p.f != nil {
		p.f.Close()
		os.Remove(p.f.Name())
		p.f = nil
	}
}

// LockTxnFileSink prepares the transactional sink of table t and takes its
// output's lock for owner (the query's checkpoint name, for the message a
// second writer gets): a lock another process holds fails with an error
// wrapping state.ErrFenced. It creates the staging directory and touches
// nothing else; Open resumes or starts the output.
func LockTxnFileSink(t *Table, env Env, cols []string, changelog bool, owner string) (*TxnFileSink, error) {
	if err := fileSinkFormat(t); err != nil {
		return nil, err
	}
	p, ok := t.Opt("path")
	if !ok {
		return nil, fmt.Errorf("table %s: connector %s needs a path option", t.Name, t.Connector)
	}
	s := &TxnFileSink{path: env.Path(p)}
	s.stage = s.path + ".clink-staging"
	s.out = &partWriter{dir: s.stage, capture: &bytes.Buffer{}, sum: &s.staging}
	s.enc = newFileEncoder(t, s.out, cols, changelog)
	if err := s.enc.flush(); err != nil {
		return nil, fmt.Errorf("table %s: %w", t.Name, err)
	}
	s.header, s.out.capture = s.out.capture.Bytes(), nil
	if err := os.MkdirAll(s.stage, 0o755); err != nil {
		return nil, fmt.Errorf("table %s: staging: %w", t.Name, err)
	}
	if err := s.lock(owner); err != nil {
		return nil, fmt.Errorf("table %s: %w", t.Name, err)
	}
	return s, nil
}

// Open starts the output of run (the query's checkpoint name) fresh
// (restore 0) or resumes it at checkpoint restore, whose sink state
// recorded rec under TxnRecordKey (nil: none, a checkpoint of an older
// clink).
func (s *TxnFileSink) Open(run string, restore state.CheckpointID, rec []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if restore == 0 {
		s.fresh, s.mark = true, commitMarker{Run: run}
		s.published = outputSum{}.add(s.header)
		s.staging = s.published
		return s.dropStaged(0)
	}
	var r *txnRecord
	if rec != nil {
		tr, err := decodeTxnRecord(rec)
		if err != nil {
			return fmt.Errorf("resume at checkpoint %d: %w", restore, err)
		}
		r = &tr
	}
	if err := s.recover(run, restore, r); err != nil {
		return fmt.Errorf("resume at checkpoint %d: %w", restore, err)
	}
	s.staging = s.published
	return nil
}

// OpenTxnFileSink is LockTxnFileSink then Open without a record.
func OpenTxnFileSink(t *Table, env Env, cols []string, changelog bool, run string, restore state.CheckpointID) (*TxnFileSink, error) {
	s, err := LockTxnFileSink(t, env, cols, changelog, run)
	if err != nil {
		return nil, err
	}
	if err := s.Open(run, restore, nil); err != nil {
		s.Close()
		return nil, fmt.Errorf("table %s: %w", t.Name, err)
	}
	return s, nil
}

// Complete reports whether the run already published its final output (a
// restarted script skips the statement); Open verified it.
func (s *TxnFileSink) Complete() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mark.Final
}

// Write buffers one change until the next barrier.
func (s *TxnFileSink) Write(ch ops.Change) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.enc.Write(ch)
}

// sealPart flushes the encoder and seals the part as checkpoint id's.
func (s *TxnFileSink) sealPart(id state.CheckpointID) error {
	if err := s.enc.flush(); err != nil {
		return err
	}
	if err := s.out.seal(s.partPath(id)); err != nil {
		return err
	}
	s.staged = append(s.staged, stagedPart{id: id, sum: s.staging})
	return nil
}

// Barrier stages the changes since the previous barrier as checkpoint
// id's part, durably, before the checkpoint can commit.
func (s *TxnFileSink) Barrier(id state.CheckpointID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return
	}
	if err := s.sealPart(id); err != nil {
		s.err = fmt.Errorf("stage checkpoint %d: %w", id, err)
	}
}

// SnapshotSink is Record: the sink's part of each checkpoint (it makes the
// sink an engine.StatefulSink for Collector.Stage).
func (s *TxnFileSink) SnapshotSink(id state.CheckpointID) []engine.SinkEntry { return s.Record(id) }

// SinkCheckpointDone has nothing to undo: a failed checkpoint is never
// published, and the next one records the output again.
func (s *TxnFileSink) SinkCheckpointDone(state.CheckpointID, error) {}

// RestoreSink reads nothing: the session checks the restored record
// before the sink opens (session fence.go).
func (s *TxnFileSink) RestoreSink(func([][]byte) ([][]byte, error)) error { return nil }

// Record is the sink's entry in checkpoint id's sink state (call it after
// Barrier(id)): the output's length and CRC-32C once id is published, or,
// when staging failed, a record that refuses a restore of id.
func (s *TxnFileSink) Record(id state.CheckpointID) []engine.SinkEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := txnRecord{name: filepath.Base(s.path), failed: true}
	if n := len(s.staged); s.err == nil && n > 0 && s.staged[n-1].id == id {
		r.sum, r.failed = s.staged[n-1].sum, false
	}
	return []engine.SinkEntry{{Key: TxnRecordKey, Value: r.encode()}}
}

// Committed publishes every staged part up to checkpoint id.
func (s *TxnFileSink) Committed(id state.CheckpointID) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	var n int
	for n < len(s.staged) && s.staged[n].id <= id {
		n++
	}
	if n == 0 {
		return nil
	}
	if err := s.publish(s.staged[:n], id, false, s.staged[n-1].sum); err != nil {
		s.err = err
		return err
	}
	s.staged = s.staged[n:]
	return nil
}

// Finish publishes everything left at the end of the query and marks the
// output final.
func (s *TxnFileSink) Finish() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	last := state.CheckpointID(0)
	if len(s.mark.Entries) > 0 {
		last = s.mark.Entries[len(s.mark.Entries)-1].Checkpoint
	}
	if len(s.staged) > 0 {
		last = max(last, s.staged[len(s.staged)-1].id)
	}
	last++
	if err := s.sealPart(last); err != nil {
		return fmt.Errorf("stage the final output: %w", err)
	}
	if err := s.publish(s.staged, last, true, s.staging); err != nil {
		return err
	}
	s.staged = nil
	return nil
}

func (s *TxnFileSink) partPath(id state.CheckpointID) string {
	return filepath.Join(s.stage, fmt.Sprintf("%020d.part", id))
}

func (s *TxnFileSink) markerPath() string { return s.path + ".clink-commit" }

// publish appends parts to the output, checks that the output is then
// exactly want (what was staged, or what the checkpoint recorded), fsyncs
// it and records it in the commit record. The output must still be what
// the record last said: a file changed by someone else is not appended to.
func (s *TxnFileSink) publish(parts []stagedPart, id state.CheckpointID, final bool, want outputSum) error {
	flags := os.O_RDWR | os.O_CREATE
	if s.fresh {
		flags |= os.O_TRUNC
	}
	f, err := os.OpenFile(s.path, flags, 0o644)
	if err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	defer f.Close()
	sum := outputSum{}
	if s.fresh {
		if _, err := (sumWriter{f, &sum}).Write(s.header); err != nil {
			return fmt.Errorf("publish: %w", err)
		}
	} else {
		size, err := f.Seek(0, io.SeekEnd)
		if err != nil {
			return fmt.Errorf("publish: %w", err)
		}
		if size != s.published.Length {
			return fmt.Errorf("publish checkpoint %d: %s was changed outside clink: %d bytes, its commit record says %d: %w",
				id, s.path, size, s.published.Length, state.ErrCorrupt)
		}
		sum = s.published
	}
	for _, p := range parts {
		if err := appendFile(sumWriter{f, &sum}, s.partPath(p.id)); err != nil {
			return fmt.Errorf("publish checkpoint %d: %w", p.id, err)
		}
	}
	if sum != want {
		back := s.published.Length
		if s.fresh {
			back = 0
		}
		_ = f.Truncate(back)
		return fmt.Errorf("publish checkpoint %d: the staged output adds up to %s, want %s (a staged part in %s is missing or damaged): %w",
			id, sum, want, s.stage, state.ErrCorrupt)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("publish: fsync %s: %w", s.path, err)
	}
	s.fresh, s.published, s.mark.Rewind = false, sum, nil
	s.mark.Entries = append(s.mark.Entries, commitEntry{Checkpoint: id, Length: sum.Length, CRC: sum.CRC})
	if len(s.mark.Entries) > keepEntries {
		s.mark.Entries = s.mark.Entries[len(s.mark.Entries)-keepEntries:]
	}
	s.mark.Final = final
	if err := s.writeMarker(); err != nil {
		return err
	}
	for _, p := range parts {
		_ = os.Remove(s.partPath(p.id))
	}
	return nil
}

// appendFile copies the file at path to w, streaming.
func appendFile(w io.Writer, path string) error {
	part, err := os.Open(path)
	if err != nil {
		return err
	}
	defer part.Close()
	_, err = io.Copy(w, part)
	return err
}

// Close drops an unsealed part (a query that stopped without finishing)
// and releases the output's lock.
func (s *TxnFileSink) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.out.discard()
	s.unlock()
}
