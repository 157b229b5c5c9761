package connector

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"clink/state"
)

// startOver is the advice when the output cannot be trusted.
const startOver = "restore the output and its commit record from a copy, or run the query again without --restore (a fresh run rewrites the output)"

// recover rewinds the output to checkpoint restore of run, whose record
// (nil: none) says what the output holds once restore is published.
func (s *TxnFileSink) recover(run string, restore state.CheckpointID, rec *txnRecord) error {
	if rec != nil && rec.failed {
		return fmt.Errorf("checkpoint %d recorded that its output could not be staged: restore an earlier checkpoint or start over without --restore", restore)
	}
	if rec != nil && rec.name != filepath.Base(s.path) {
		return fmt.Errorf("checkpoint %d recorded the output %s, not %s", restore, rec.name, filepath.Base(s.path))
	}
	mark, err := s.readMarker()
	if errors.Is(err, os.ErrNotExist) {
		return s.rebuild(run, restore, rec, fmt.Sprintf("its commit record %s is missing", s.markerPath()))
	}
	if err != nil {
		return fmt.Errorf("%w; %s", err, startOver)
	}
	if mark.Run != run {
		// A run that never published (it crashed before its first
		// publish, after another run's): its staged parts rebuild it.
		if s.allStaged(restore) {
			return s.rebuild(run, restore, rec, "")
		}
		return fmt.Errorf("%s belongs to run %s, not %s: start without --restore", s.path, mark.Run, run)
	}
	s.mark = mark
	if err := s.verifyOutput(); err != nil {
		return err
	}
	if s.mark.Final {
		return nil
	}
	keep := -1
	for i, e := range s.mark.Entries {
		if e.Checkpoint <= restore {
			keep = i
		}
	}
	if keep < 0 {
		if len(s.mark.Entries) > 0 && s.mark.Entries[0].Checkpoint > 1 {
			return fmt.Errorf("the output's history no longer reaches back to checkpoint %d", restore)
		}
		// Nothing published is kept: the output starts over (a crash
		// meanwhile finds a record without entries and starts over again).
		s.fresh, s.mark.Entries, s.mark.Rewind = true, nil, nil
		if err := s.writeMarker(); err != nil {
			return err
		}
		s.published = outputSum{}.add(s.header)
		return s.publishStaged(restore, rec)
	}
	e := s.mark.Entries[keep]
	if s.size > e.Length {
		// Record the rewind before the file is cut back, so a crash in
		// between is told from an output extended by someone else.
		whole, err := sumFile(s.path, s.size)
		if err != nil {
			return err
		}
		s.mark.Entries = s.mark.Entries[:keep+1]
		s.mark.Rewind = &commitEntry{Length: whole.Length, CRC: whole.CRC}
		if err := s.writeMarker(); err != nil {
			return err
		}
		if err := os.Truncate(s.path, e.Length); err != nil {
			return err
		}
	}
	s.mark.Entries = s.mark.Entries[:keep+1]
	s.published = e.sum()
	if s.mark.Version < markerVersion { // no checksums recorded: take the file's
		if s.published, err = sumFile(s.path, e.Length); err != nil {
			return err
		}
	}
	return s.publishStaged(restore, rec)
}

// verifyOutput checks that the output is exactly what the commit record
// last published: its length, and (version 2) its CRC-32C. A longer output
// is accepted only when the bytes after it are the staged parts that
// follow, in order: a publish cut short by a crash (it appends and fsyncs
// the output before it writes the record), which the restore truncates.
func (s *TxnFileSink) verifyOutput() error {
	if len(s.mark.Entries) == 0 {
		return nil
	}
	last := s.mark.Entries[len(s.mark.Entries)-1]
	st, err := os.Stat(s.path)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%s is missing, but its commit record says checkpoint %d published %d bytes: %w; %s",
			s.path, last.Checkpoint, last.Length, state.ErrCorrupt, startOver)
	}
	if err != nil {
		return err
	}
	s.size = st.Size()
	crashed := false
	if rw := s.mark.Rewind; rw != nil && st.Size() == rw.Length && st.Size() > last.Length {
		// a rewind cut short: the record was cut back, the file not yet
		whole, err := sumFile(s.path, rw.Length)
		if err != nil {
			return err
		}
		crashed = s.mark.Version < markerVersion || whole.CRC == rw.CRC
	} else if st.Size() > last.Length {
		if crashed, err = s.crashTail(last.Length, last.Checkpoint); err != nil {
			return err
		}
	}
	if st.Size() != last.Length && !crashed {
		how := "cut short"
		if st.Size() > last.Length {
			how = "extended"
		}
		return fmt.Errorf("%s is %d bytes, but its commit record says checkpoint %d published %d (the file was %s outside clink): %w; %s",
			s.path, st.Size(), last.Checkpoint, last.Length, how, state.ErrCorrupt, startOver)
	}
	if s.mark.Version < markerVersion {
		return nil
	}
	sum, err := sumFile(s.path, last.Length) // the published prefix
	if err != nil {
		return err
	}
	if sum.CRC != last.CRC {
		return fmt.Errorf("%s does not match its commit record: crc32c %08x, checkpoint %d published %08x (the file was edited or damaged): %w; %s",
			s.path, sum.CRC, last.Checkpoint, last.CRC, state.ErrCorrupt, startOver)
	}
	s.published = sum
	return nil
}

// crashTail reports whether the output's bytes from offset n on are a
// prefix of the staged parts after checkpoint after, in order.
func (s *TxnFileSink) crashTail(n int64, after state.CheckpointID) (bool, error) {
	out, err := os.Open(s.path)
	if err != nil {
		return false, err
	}
	defer out.Close()
	if _, err := out.Seek(n, io.SeekStart); err != nil {
		return false, err
	}
	parts, err := s.listStaged()
	if err != nil {
		return false, err
	}
	got, want := make([]byte, 64<<10), make([]byte, 64<<10)
	for _, p := range parts {
		if p <= after {
			continue
		}
		f, err := os.Open(s.partPath(p))
		if err != nil {
			return false, err
		}
		same, ended, err := prefixOf(out, f, got, want)
		f.Close()
		if err != nil || !same || ended {
			return same && err == nil, err
		}
	}
	k, err := out.Read(got[:1])
	return k == 0 && errors.Is(err, io.EOF), nil // nothing after the staged parts
}

// prefixOf compares out's next bytes with all of part: same reports
// whether they agree as far as both go, ended whether out ended first.
func prefixOf(out, part io.Reader, got, want []byte) (same, ended bool, err error) {
	for {
		n, perr := io.ReadFull(part, want)
		if n > 0 {
			m, oerr := io.ReadFull(out, got[:n])
			if !bytes.Equal(got[:m], want[:m]) {
				return false, false, nil
			}
			if m < n {
				return true, true, nil
			}
			if oerr != nil && !errors.Is(oerr, io.EOF) && !errors.Is(oerr, io.ErrUnexpectedEOF) {
				return false, false, oerr
			}
		}
		if errors.Is(perr, io.EOF) || errors.Is(perr, io.ErrUnexpectedEOF) {
			return true, false, nil
		}
		if perr != nil {
			return false, false, perr
		}
	}
}

// rebuild starts the output over from the staged parts 1..restore, which
// must all be there (nothing of the run was published yet): why says why
// there is no commit record of this run ("": it never published).
func (s *TxnFileSink) rebuild(run string, restore state.CheckpointID, rec *txnRecord, why string) error {
	if !s.allStaged(restore) {
		if why == "" {
			why = "it has no commit record"
		}
		return fmt.Errorf("%s: %s, and the staged output of the checkpoints up to %d is incomplete (published, then the record was lost?): %w; %s",
			s.path, why, restore, state.ErrCorrupt, startOver)
	}
	s.fresh, s.mark = true, commitMarker{Run: run}
	s.published = outputSum{}.add(s.header)
	return s.publishStaged(restore, rec)
}

// allStaged reports whether staged parts 1..restore are all there.
func (s *TxnFileSink) allStaged(restore state.CheckpointID) bool {
	parts, err := s.listStaged()
	if err != nil {
		return false
	}
	have := map[state.CheckpointID]bool{}
	for _, p := range parts {
		have[p] = true
	}
	for id := state.CheckpointID(1); id <= restore; id++ {
		if !have[id] {
			return false
		}
	}
	return true
}

// publishStaged publishes the staged parts up to restore (checkpoints that
// committed before the crash but were not published), checking that the
// output then matches what checkpoint restore recorded, and drops the
// rest.
func (s *TxnFileSink) publishStaged(restore state.CheckpointID, rec *txnRecord) error {
	parts, err := s.listStaged()
	if err != nil {
		return err
	}
	var pub []stagedPart
	for _, p := range parts {
		if p <= restore && (len(s.mark.Entries) == 0 || p > s.mark.Entries[len(s.mark.Entries)-1].Checkpoint) {
			pub = append(pub, stagedPart{id: p})
		}
	}
	want := s.published
	for _, p := range pub {
		if want, err = addFile(want, s.partPath(p.id)); err != nil {
			return fmt.Errorf("staging: %w", err)
		}
	}
	if rec != nil && want != rec.sum {
		return fmt.Errorf("%s with the staged output up to checkpoint %d would be %s, but checkpoint %d recorded %s (a staged part in %s is missing or damaged, or the output was replaced): %w; %s",
			s.path, restore, want, restore, rec.sum, s.stage, state.ErrCorrupt, startOver)
	}
	if len(pub) > 0 || s.fresh {
		if err := s.publish(pub, restore, false, want); err != nil {
			return err
		}
	}
	return s.dropStaged(0)
}

// addFile is sum extended with the bytes of the file at path.
func addFile(sum outputSum, path string) (outputSum, error) {
	f, err := os.Open(path)
	if err != nil {
		return sum, err
	}
	defer f.Close()
	_, err = io.Copy(sumWriter{io.Discard, &sum}, f)
	return sum, err
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
