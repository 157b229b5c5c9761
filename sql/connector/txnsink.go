package connector

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

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
//     <checkpoint>.part, so memory never holds more than a buffer;
//  2. when the checkpoint completes, every staged part up to it is appended
//     to PATH in order, PATH is fsync'd, and the marker PATH.clink-commit
//     (atomically replaced) records the checkpoint and PATH's length.
//
// Restoring checkpoint C truncates PATH to the length the marker recorded
// for the newest published checkpoint <= C, publishes the staged parts up
// to C and drops the rest, so PATH never holds a change twice or misses
// one. A fresh run leaves PATH untouched until its first publish.
type TxnFileSink struct {
	mu     sync.Mutex
	path   string
	stage  string
	enc    *FileSink
	out    *partWriter
	header []byte
	mark   commitMarker
	fresh  bool
	staged []state.CheckpointID
	err    error
}

// partWriter is what the encoder writes to: the header into a buffer at
// first, then the temporary part file of the changes since the last
// barrier, created by the first write after it.
type partWriter struct {
	dir     string
	capture *bytes.Buffer
	f       *os.File
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
	return p.f.Write(b)
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

// commitMarker is PATH.clink-commit: which run owns the file and the
// file's length after each published checkpoint.
type commitMarker struct {
	Version int           `json:"version"`
	Run     string        `json:"run"`
	Entries []commitEntry `json:"entries"`
	Final   bool          `json:"final"`
}

type commitEntry struct {
	Checkpoint state.CheckpointID `json:"checkpoint"`
	Length     int64              `json:"length"`
}

// OpenTxnFileSink prepares the transactional sink of table t for run (the
// query's checkpoint name). restore is the checkpoint the query resumes
// from (0: a fresh run).
func OpenTxnFileSink(t *Table, env Env, cols []string, changelog bool, run string, restore state.CheckpointID) (*TxnFileSink, error) {
	p, ok := t.Opt("path")
	if !ok {
		return nil, fmt.Errorf("table %s: connector %s needs a path option", t.Name, t.Connector)
	}
	s := &TxnFileSink{path: env.Path(p)}
	s.stage = s.path + ".clink-staging"
	s.out = &partWriter{dir: s.stage, capture: &bytes.Buffer{}}
	s.enc = newFileEncoder(t, s.out, cols, changelog)
	if err := s.enc.flush(); err != nil {
		return nil, fmt.Errorf("table %s: %w", t.Name, err)
	}
	s.header, s.out.capture = s.out.capture.Bytes(), nil
	if err := os.MkdirAll(s.stage, 0o755); err != nil {
		return nil, fmt.Errorf("table %s: staging: %w", t.Name, err)
	}
	if restore == 0 {
		s.fresh, s.mark = true, commitMarker{Version: 1, Run: run}
		return s, s.dropStaged(0)
	}
	if err := s.recover(run, restore); err != nil {
		return nil, fmt.Errorf("table %s: resume output at checkpoint %d: %w", t.Name, restore, err)
	}
	return s, nil
}

// Complete reports whether the run already published its final output (a
// restarted script skips the statement).
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
	return s.out.seal(s.partPath(id))
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
		return
	}
	s.staged = append(s.staged, id)
}

// Committed publishes every staged part up to checkpoint id.
func (s *TxnFileSink) Committed(id state.CheckpointID) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	var n int
	for n < len(s.staged) && s.staged[n] <= id {
		n++
	}
	if err := s.publish(s.staged[:n], id, false); err != nil {
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
		last = max(last, s.staged[len(s.staged)-1])
	}
	last++
	if err := s.sealPart(last); err != nil {
		return fmt.Errorf("stage the final output: %w", err)
	}
	if err := s.publish(append(s.staged, last), last, true); err != nil {
		return err
	}
	s.staged = nil
	return nil
}

func (s *TxnFileSink) partPath(id state.CheckpointID) string {
	return filepath.Join(s.stage, fmt.Sprintf("%020d.part", id))
}

func (s *TxnFileSink) markerPath() string { return s.path + ".clink-commit" }

// publish appends parts to the output, fsyncs it and records the marker.
func (s *TxnFileSink) publish(parts []state.CheckpointID, id state.CheckpointID, final bool) error {
	flags := os.O_WRONLY | os.O_CREATE | os.O_APPEND
	if s.fresh {
		flags |= os.O_TRUNC
	}
	f, err := os.OpenFile(s.path, flags, 0o644)
	if err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	defer f.Close()
	if s.fresh {
		if _, err := f.Write(s.header); err != nil {
			return fmt.Errorf("publish: %w", err)
		}
		s.fresh = false
	}
	for _, p := range parts {
		if err := appendFile(f, s.partPath(p)); err != nil {
			return fmt.Errorf("publish checkpoint %d: %w", p, err)
		}
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("publish: fsync %s: %w", s.path, err)
	}
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	s.mark.Entries = append(s.mark.Entries, commitEntry{Checkpoint: id, Length: size})
	if len(s.mark.Entries) > keepEntries {
		s.mark.Entries = s.mark.Entries[len(s.mark.Entries)-keepEntries:]
	}
	s.mark.Final = final
	if err := s.writeMarker(); err != nil {
		return err
	}
	for _, p := range parts {
		_ = os.Remove(s.partPath(p))
	}
	return nil
}

func (s *TxnFileSink) writeMarker() error {
	data, err := json.Marshal(s.mark)
	if err != nil {
		return fmt.Errorf("commit marker: %w", err)
	}
	if err := writeDurable(s.markerPath(), data); err != nil {
		return fmt.Errorf("commit marker: %w", err)
	}
	return nil
}

// recover rewinds the output to checkpoint restore of run.
func (s *TxnFileSink) recover(run string, restore state.CheckpointID) error {
	data, err := os.ReadFile(s.markerPath())
	if errors.Is(err, os.ErrNotExist) {
		// the run never published: behave as a fresh output
		s.fresh, s.mark = true, commitMarker{Version: 1, Run: run}
		return s.publishStaged(restore)
	}
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, &s.mark); err != nil {
		return fmt.Errorf("%s: %w", s.markerPath(), err)
	}
	if s.mark.Run != run {
		return fmt.Errorf("%s belongs to run %s, not %s: start without --restore", s.path, s.mark.Run, run)
	}
	if s.mark.Final {
		return nil
	}
	keep, length := -1, int64(0)
	for i, e := range s.mark.Entries {
		if e.Checkpoint <= restore {
			keep, length = i, e.Length
		}
	}
	if keep < 0 {
		if len(s.mark.Entries) > 0 && s.mark.Entries[0].Checkpoint > 1 {
			return fmt.Errorf("the output's history no longer reaches back to checkpoint %d", restore)
		}
		s.fresh, s.mark.Entries = true, nil
	} else {
		s.mark.Entries = s.mark.Entries[:keep+1]
		if err := os.Truncate(s.path, length); err != nil {
			return err
		}
	}
	return s.publishStaged(restore)
}

// publishStaged publishes the staged parts up to restore (checkpoints that
// committed before the crash but were not published) and drops the rest.
func (s *TxnFileSink) publishStaged(restore state.CheckpointID) error {
	parts, err := s.listStaged()
	if err != nil {
		return err
	}
	var pub []state.CheckpointID
	for _, p := range parts {
		if p <= restore && (len(s.mark.Entries) == 0 || p > s.mark.Entries[len(s.mark.Entries)-1].Checkpoint) {
			pub = append(pub, p)
		}
	}
	if len(pub) > 0 || s.fresh {
		if err := s.publish(pub, restore, false); err != nil {
			return err
		}
	}
	return s.dropStaged(0)
}

// listStaged returns the staged checkpoint ids in order.
func (s *TxnFileSink) listStaged() ([]state.CheckpointID, error) {
	ents, err := os.ReadDir(s.stage)
	if err != nil {
		return nil, fmt.Errorf("staging: %w", err)
	}
	var out []state.CheckpointID
	for _, e := range ents {
		n, err := strconv.ParseUint(strings.TrimSuffix(e.Name(), ".part"), 10, 64)
		if err == nil && strings.HasSuffix(e.Name(), ".part") {
			out = append(out, state.CheckpointID(n))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, nil
}

// appendFile copies the file at path to the end of f, streaming.
func appendFile(f *os.File, path string) error {
	part, err := os.Open(path)
	if err != nil {
		return err
	}
	defer part.Close()
	_, err = io.Copy(f, part)
	return err
}

// Close drops an unsealed part (a query that stopped without finishing).
func (s *TxnFileSink) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.out.discard()
}

// dropStaged removes staged parts newer than keep (every part for 0) and,
// for 0, the temporary parts a crash left behind.
func (s *TxnFileSink) dropStaged(keep state.CheckpointID) error {
	parts, err := s.listStaged()
	if err != nil {
		return err
	}
	if keep == 0 {
		tmps, _ := filepath.Glob(filepath.Join(s.stage, ".tmp-*"))
		for _, t := range tmps {
			_ = os.Remove(t)
		}
	}
	for _, p := range parts {
		if p > keep {
			if err := os.Remove(s.partPath(p)); err != nil {
				return fmt.Errorf("staging: %w", err)
			}
		}
	}
	return nil
}

// writeDurable writes data to path atomically: a temporary file, fsync,
// rename, and an fsync of the directory.
func writeDurable(path string, data []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	if err := errors.Join(werr, f.Sync(), f.Close()); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(dir)
}

// syncDir fsyncs a directory, making a rename in it durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
