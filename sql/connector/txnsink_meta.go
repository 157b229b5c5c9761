package connector

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"clink/state"
	"clink/state/checksum"
)

// What a TxnFileSink keeps besides the output: a lock that makes one
// process at a time its writer, the commit record PATH.clink-commit (what
// was published, sealed with a CRC-32C) and, in each checkpoint's sink
// state, the length and CRC-32C the output has once that checkpoint is
// published (TxnRecordKey), so a restore verifies the output against the
// checkpoint itself.

// TxnRecordKey is the sink-state key (engine.SinkStateOp) under which a
// checkpoint records its transactional file sink's output.
var TxnRecordKey = []byte("clink-txn-sink")

// outputSum is the length and CRC-32C of an output (or of its prefix).
type outputSum struct {
	Length int64
	CRC    uint32
}

func (o outputSum) add(b []byte) outputSum {
	return outputSum{o.Length + int64(len(b)), checksum.Update(o.CRC, b)}
}

func (o outputSum) String() string { return fmt.Sprintf("%d bytes, crc32c %08x", o.Length, o.CRC) }

// sumWriter adds what it writes to sum, then writes it to w.
type sumWriter struct {
	w   io.Writer
	sum *outputSum
}

func (s sumWriter) Write(b []byte) (int, error) {
	n, err := s.w.Write(b)
	*s.sum = s.sum.add(b[:n])
	return n, err
}

// sumFile is the outputSum of the first n bytes of the file at path.
func sumFile(path string, n int64) (outputSum, error) {
	f, err := os.Open(path)
	if err != nil {
		return outputSum{}, err
	}
	defer f.Close()
	var sum outputSum
	if _, err := io.Copy(sumWriter{io.Discard, &sum}, io.LimitReader(f, n)); err != nil {
		return sum, err
	}
	return sum, nil
}

// A record is what a checkpoint holds about the sink's output:
//
//	version(1) = 1  flags(1; 1 = staging failed)  uvarint(len name) name  uvarint(length)  crc32c(uint32 LE)
type txnRecord struct {
	sum    outputSum
	failed bool
	name   string // the output's base name
}

func (r txnRecord) encode() []byte {
	b := []byte{1, 0}
	if r.failed {
		b[1] = 1
	}
	b = binary.AppendUvarint(b, uint64(len(r.name)))
	b = append(b, r.name...)
	b = binary.AppendUvarint(b, uint64(r.sum.Length))
	return binary.LittleEndian.AppendUint32(b, r.sum.CRC)
}

func decodeTxnRecord(b []byte) (txnRecord, error) {
	var r txnRecord
	if len(b) < 2 || b[0] != 1 {
		return r, errors.New("unknown sink record")
	}
	r.failed, b = b[1]&1 != 0, b[2:]
	l, k := binary.Uvarint(b)
	if k <= 0 || l > uint64(len(b)-k) {
		return r, errors.New("bad sink record")
	}
	r.name, b = string(b[k:k+int(l)]), b[k+int(l):]
	n, k := binary.Uvarint(b)
	if k <= 0 || len(b)-k != 4 {
		return r, errors.New("bad sink record")
	}
	r.sum = outputSum{Length: int64(n), CRC: binary.LittleEndian.Uint32(b[k:])}
	return r, nil
}

// commitMarker is PATH.clink-commit: which run owns the file and the
// file's length (and, from version 2, CRC-32C) after each published
// checkpoint. Version 2 is sealed (checksum.Seal) and names its output.
type commitMarker struct {
	Version int           `json:"version"`
	Output  string        `json:"output,omitempty"`
	Run     string        `json:"run"`
	Entries []commitEntry `json:"entries"`
	Final   bool          `json:"final"`
	// Rewind (version 2) is the output's length and CRC-32C before a
	// restore cut it back to the last entry, until the next publish.
	Rewind *commitEntry `json:"rewind,omitempty"`
}

const markerVersion = 2

type commitEntry struct {
	Checkpoint state.CheckpointID `json:"checkpoint"`
	Length     int64              `json:"length"`
	CRC        uint32             `json:"crc32c,omitempty"`
}

func (e commitEntry) sum() outputSum { return outputSum{e.Length, e.CRC} }

// readMarker reads and verifies the commit record (os.ErrNotExist wrapped
// when there is none).
func (s *TxnFileSink) readMarker() (commitMarker, error) {
	var m commitMarker
	data, err := os.ReadFile(s.markerPath())
	if err != nil {
		return m, err
	}
	body, sealed, err := checksum.Unseal(data)
	if err == nil {
		err = json.Unmarshal(body, &m)
	}
	switch {
	case err != nil && !sealed && checksum.Cut(data):
		err = errors.New("its checksum line is cut short or followed by extra bytes")
	case err != nil:
	case m.Version >= markerVersion && !sealed:
		err = errors.New("its checksum line is missing (cut short or extended?)")
	case m.Version > markerVersion:
		return m, fmt.Errorf("%s: version %d, written by a newer clink", s.markerPath(), m.Version)
	case m.Version >= markerVersion && m.Output != filepath.Base(s.path):
		err = fmt.Errorf("it is the commit record of %s", m.Output)
	}
	if err != nil {
		return m, fmt.Errorf("commit record %s is damaged: %w: %w", s.markerPath(), state.ErrCorrupt, err)
	}
	return m, nil
}

func (s *TxnFileSink) writeMarker() error {
	s.mark.Version, s.mark.Output = markerVersion, filepath.Base(s.path)
	data, err := json.Marshal(s.mark)
	if err != nil {
		return fmt.Errorf("commit record: %w", err)
	}
	if err := writeDurable(s.markerPath(), checksum.Seal(data)); err != nil {
		return fmt.Errorf("commit record: %w", err)
	}
	return nil
}

// lockName is the lock file in the staging directory.
const lockName = "LOCK"

// lock takes the output's lock for this sink's lifetime (an exclusive,
// non-blocking flock, released when the process ends however it ends) and
// writes who holds it. A lock held elsewhere fails with state.ErrFenced,
// naming its holder.
func (s *TxnFileSink) lock(owner string) error {
	f, err := os.OpenFile(filepath.Join(s.stage, lockName), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("lock the output: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		holder, _ := io.ReadAll(io.LimitReader(f, 512))
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			who := strings.TrimSpace(string(holder))
			if who == "" {
				who = "another process"
			}
			return fencedError(fmt.Sprintf("fenced: another process owns this query's checkpoints: %s is being written by %s; this run stopped before touching it",
				s.path, who))
		}
		return fmt.Errorf("lock the output: %w", err)
	}
	info := fmt.Sprintf("pid %d (%s, since %s)\n", os.Getpid(), owner, time.Now().Format(time.DateTime))
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(info), 0)
	}
	s.lockFile = f
	return nil
}

// fencedError is an error of its own words that wraps state.ErrFenced.
type fencedError string

func (e fencedError) Error() string { return string(e) }
func (e fencedError) Unwrap() error { return state.ErrFenced }

// unlock releases the output's lock.
func (s *TxnFileSink) unlock() {
	if s.lockFile != nil {
		s.lockFile.Close() // closing the descriptor releases the flock
		s.lockFile = nil
	}
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
