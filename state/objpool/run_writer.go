package objpool

import (
	"bytes"
	"encoding/binary"
	"io"

	"clink/state/checksum"
)

// encodeRun writes sorted, de-duplicated records as run object key in
// format 3 (runWriter).
func encodeRun(key string, recs []record, blockSize int) ([]byte, RunRef) {
	size := 64 + len(key) + len(recs)*12/10 // Bloom filter, footer
	for _, r := range recs {
		size += len(r.ik) + len(r.value) + 16 // framing, trailer offset
	}
	w := newRunWriter(key, blockSize, size)
	for _, r := range recs {
		w.add(r)
	}
	data, ref, _ := w.finish() // in memory: no write to fail
	return data, ref
}

// runWriter encodes a run record by record in format 3: every block ends
// in its records' offsets and checksum (appendTrailer), the index names the
// run and pins each block's checksum, and the footer checksums the index.
// It copies what it keeps, so a record may alias a buffer the caller
// reuses (compaction's source blocks). It builds the object in memory, or,
// made by newStreamRunWriter, writes each finished block to out and keeps
// only the open one; besides that it holds the index, and the Bloom
// filter's hashes in memory or, streaming, in a spool of their own.
type runWriter struct {
	key        string
	blockSize  int
	buf        []byte // the object so far, or (out set) its unwritten tail
	out        io.Writer
	base       int64  // bytes already written to out
	err        error  // out's first write error
	idx        []byte // index entries of the finished blocks
	nblocks    uint64
	blockStart int // -1: no open block
	first      []byte
	offs       []uint32
	n          int
	hashes     keyHashes
	min, max   []byte
}

// newRunWriter starts run key; size is a capacity hint for its bytes.
func newRunWriter(key string, blockSize, size int) *runWriter {
	return &runWriter{key: key, blockSize: blockSize, buf: make([]byte, 0, size), hashes: &memHashes{}, blockStart: -1}
}

// newStreamRunWriter starts run key written to out, its Bloom filter's
// hashes kept in hashes.
func newStreamRunWriter(key string, blockSize int, out io.Writer, hashes keyHashes) *runWriter {
	return &runWriter{key: key, blockSize: blockSize, buf: make([]byte, 0, 2*blockSize), out: out,
		hashes: hashes, blockStart: -1}
}

// keyHashes collects the bloomHashes of a run's records until the count,
// which sizes the filter, is known.
type keyHashes interface {
	add(h1, h2 uint64)
	// filter builds the Bloom filter of the n hashes added.
	filter(n int) (*bloom, error)
}

// memHashes keeps the hashes in memory.
type memHashes [][2]uint64

func (m *memHashes) add(h1, h2 uint64) { *m = append(*m, [2]uint64{h1, h2}) }

func (m *memHashes) filter(int) (*bloom, error) { return bloomOf(*m), nil }

// add appends r, whose key must exceed the previous record's.
func (w *runWriter) add(r record) {
	if w.blockStart < 0 {
		w.blockStart = len(w.buf)
		w.first = append(w.first[:0], r.ik...)
	}
	if w.n == 0 {
		w.min = bytes.Clone(r.ik)
	}
	w.n++
	h1, h2 := bloomHashes(r.ik)
	w.hashes.add(h1, h2)
	w.offs = append(w.offs, uint32(len(w.buf)-w.blockStart))
	buf := binary.AppendUvarint(w.buf, uint64(len(r.ik)))
	keyAt := len(buf)
	buf = append(buf, r.ik...)
	var flags byte
	if r.deleted {
		flags = flagDelete
	}
	buf = append(buf, flags)
	buf = binary.AppendUvarint(buf, uint64(r.keyGroup))
	buf = binary.AppendUvarint(buf, uint64(len(r.value)))
	buf = append(buf, r.value...)
	w.buf = buf
	w.max = buf[keyAt : keyAt+len(r.ik) : keyAt+len(r.ik)]
	if len(w.buf)-w.blockStart >= w.blockSize {
		w.flush()
	}
}

// flush closes the open block and, streaming, writes it out.
func (w *runWriter) flush() {
	if w.blockStart < 0 {
		return
	}
	w.buf = appendTrailer(w.buf, w.blockStart, w.offs)
	w.offs = w.offs[:0]
	w.idx = binary.AppendUvarint(w.idx, uint64(len(w.first)))
	w.idx = append(w.idx, w.first...)
	w.idx = binary.AppendUvarint(w.idx, uint64(w.base)+uint64(w.blockStart))
	w.idx = binary.AppendUvarint(w.idx, uint64(len(w.buf)-w.blockStart))
	w.idx = append(w.idx, w.buf[len(w.buf)-4:]...) // the block's CRC-32C
	w.nblocks++
	w.blockStart = -1
	if w.out != nil {
		w.max = bytes.Clone(w.max) // buf is reused
		w.write()
	}
}

// write hands buf to out.
func (w *runWriter) write() {
	if w.err == nil {
		_, w.err = w.out.Write(w.buf)
	}
	w.base += int64(len(w.buf))
	w.buf = w.buf[:0]
}

// count is how many records the run holds so far.
func (w *runWriter) count() int { return w.n }

// finish writes the index and footer and returns the object (nil when
// streaming: it is in out) and its manifest entry.
func (w *runWriter) finish() ([]byte, RunRef, error) {
	w.flush()
	buf := w.buf
	local := len(buf)
	indexOff := w.base + int64(local)
	buf = binary.AppendUvarint(buf, uint64(len(w.key)))
	buf = append(buf, w.key...)
	buf = binary.AppendUvarint(buf, uint64(w.count()))
	buf = binary.AppendUvarint(buf, w.nblocks)
	buf = append(buf, w.idx...)
	filter, err := w.hashes.filter(w.count())
	if err != nil {
		return nil, RunRef{}, err
	}
	buf = filter.appendTo(buf)
	indexLen := len(buf) - local
	buf = binary.BigEndian.AppendUint64(buf, uint64(indexOff))
	buf = binary.BigEndian.AppendUint32(buf, uint32(indexLen))
	sum := checksum.CRC(buf[local:])
	buf = binary.LittleEndian.AppendUint32(buf, sum)
	buf = append(buf, runMagicV3...)
	ref := RunRef{Key: w.key, Size: w.base + int64(len(buf)), IndexOff: indexOff, IndexLen: int64(indexLen), Count: w.count(),
		Format: runFormat, CRC: sum}
	if w.count() > 0 {
		// Copies: the manifest must not pin the object's bytes.
		ref.Min, ref.Max = w.min, bytes.Clone(w.max)
	}
	if w.out == nil {
		return buf, ref, nil
	}
	w.buf = buf
	w.write()
	return nil, ref, w.err
}
