package objpool

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"

	"clink/state"
)

// A run is one immutable object holding sorted (operator, key) entries of
// one partition: data blocks, a sparse index (first key and extent of each
// block) and a 16-byte footer. Readers fetch the index, then only the blocks
// they need, with ranged GETs. docs/object-layout.md has the byte format.

const (
	runMagicV1 = "CLR1" // format 1: blocks are bare records
	runMagicV2 = "CLR2" // format 2: each block ends in a record-offset trailer
	footerSize = 16
	flagDelete = 1
	// runFormat is the format encodeRun writes (RunRef.Format).
	runFormat = 2
)

var errCorrupt = errors.New("corrupt run object")

// ikey is the internal key: the operator id big-endian, then the key bytes,
// so bytes.Compare orders by (operator, key).
func ikey(k state.Key) []byte {
	b := make([]byte, 4+len(k.Key))
	binary.BigEndian.PutUint32(b, uint32(k.Op))
	copy(b[4:], k.Key)
	return b
}

// record is one entry of a run.
type record struct {
	ik       []byte
	value    []byte
	deleted  bool
	keyGroup int // the job's key group (Entry.KeyGroup), for scans
}

// RunRef describes one run object in a manifest.
type RunRef struct {
	Key      string `json:"key"`
	Size     int64  `json:"size"`
	IndexOff int64  `json:"index_off"`
	IndexLen int64  `json:"index_len"`
	Count    int    `json:"count"`
	Min      []byte `json:"min"`
	Max      []byte `json:"max"`
	// Format is the run's block format: 0 or 1 (bare records, the first
	// layout) or 2 (blocks searchable in place, see block.go).
	Format int `json:"format,omitempty"`
}

// format is the run's block format, 1 for runs written before formats
// were recorded.
func (r *RunRef) format() int { return max(r.Format, 1) }

// covers reports whether ik lies within the run's key range.
func (r *RunRef) covers(ik []byte) bool {
	return bytes.Compare(ik, r.Min) >= 0 && bytes.Compare(ik, r.Max) <= 0
}

// blockRef locates one data block of a run.
type blockRef struct {
	first []byte
	off   int64
	n     int64
}

// runIndex is a run's parsed sparse index.
type runIndex struct {
	blocks []blockRef
	filter *bloom
}

// find returns the block that may hold ik, or -1.
func (x *runIndex) find(ik []byte) int {
	i := sort.Search(len(x.blocks), func(i int) bool { return bytes.Compare(x.blocks[i].first, ik) > 0 })
	return i - 1
}

func (x *runIndex) size() int64 {
	n := int64(64)
	if x.filter != nil {
		n += int64(len(x.filter.bits))
	}
	for _, b := range x.blocks {
		n += int64(len(b.first)) + 40
	}
	return n
}

// encodeRun writes sorted, de-duplicated records as a run object in
// format 2: every block ends in its records' offsets (appendTrailer).
func encodeRun(recs []record, blockSize int) ([]byte, RunRef) {
	var idx []byte
	size := 64 + len(recs)*12/10 // Bloom filter, footer
	for _, r := range recs {
		size += len(r.ik) + len(r.value) + 16 // framing, trailer offset
	}
	buf := make([]byte, 0, size)
	var nblocks uint64
	blockStart := -1
	var first []byte
	var offs []uint32
	flush := func() {
		if blockStart < 0 {
			return
		}
		buf = appendTrailer(buf, blockStart, offs)
		offs = offs[:0]
		idx = binary.AppendUvarint(idx, uint64(len(first)))
		idx = append(idx, first...)
		idx = binary.AppendUvarint(idx, uint64(blockStart))
		idx = binary.AppendUvarint(idx, uint64(len(buf)-blockStart))
		nblocks++
		blockStart = -1
	}
	for _, r := range recs {
		if blockStart < 0 {
			blockStart, first = len(buf), r.ik
		}
		offs = append(offs, uint32(len(buf)-blockStart))
		buf = binary.AppendUvarint(buf, uint64(len(r.ik)))
		buf = append(buf, r.ik...)
		var flags byte
		if r.deleted {
			flags = flagDelete
		}
		buf = append(buf, flags)
		buf = binary.AppendUvarint(buf, uint64(r.keyGroup))
		buf = binary.AppendUvarint(buf, uint64(len(r.value)))
		buf = append(buf, r.value...)
		if len(buf)-blockStart >= blockSize {
			flush()
		}
	}
	flush()
	indexOff := len(buf)
	buf = binary.AppendUvarint(buf, nblocks)
	buf = append(buf, idx...)
	buf = newBloom(recs).appendTo(buf)
	indexLen := len(buf) - indexOff
	buf = binary.BigEndian.AppendUint64(buf, uint64(indexOff))
	buf = binary.BigEndian.AppendUint32(buf, uint32(indexLen))
	buf = append(buf, runMagicV2...)
	ref := RunRef{Size: int64(len(buf)), IndexOff: int64(indexOff), IndexLen: int64(indexLen), Count: len(recs), Format: runFormat}
	if len(recs) > 0 {
		ref.Min, ref.Max = recs[0].ik, recs[len(recs)-1].ik
	}
	return buf, ref
}

// parseIndex decodes a run's index block.
func parseIndex(b []byte) (*runIndex, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, fmt.Errorf("%w: bad index header", errCorrupt)
	}
	b = b[k:]
	x := &runIndex{blocks: make([]blockRef, 0, n)}
	for i := uint64(0); i < n; i++ {
		var fields [3]uint64
		var first []byte
		for j := range fields {
			v, k := binary.Uvarint(b)
			if k <= 0 {
				return nil, fmt.Errorf("%w: bad index entry %d", errCorrupt, i)
			}
			b = b[k:]
			fields[j] = v
			if j == 0 {
				if v > uint64(len(b)) {
					return nil, fmt.Errorf("%w: index key overflows", errCorrupt)
				}
				first, b = b[:v], b[v:]
			}
		}
		x.blocks = append(x.blocks, blockRef{first: first, off: int64(fields[1]), n: int64(fields[2])})
	}
	f, ok := parseBloom(b)
	if !ok {
		return nil, fmt.Errorf("%w: bad bloom filter", errCorrupt)
	}
	x.filter = f
	return x, nil
}

// parseRun decodes a whole run object of either format (compaction, scans
// and small runs); the footer's magic says which.
func parseRun(data []byte) (*runIndex, []*block, error) {
	if len(data) < footerSize {
		return nil, nil, fmt.Errorf("%w: bad footer", errCorrupt)
	}
	var format int
	switch string(data[len(data)-4:]) {
	case runMagicV1:
		format = 1
	case runMagicV2:
		format = 2
	default:
		return nil, nil, fmt.Errorf("%w: bad footer", errCorrupt)
	}
	f := data[len(data)-footerSize:]
	off, n := binary.BigEndian.Uint64(f), uint64(binary.BigEndian.Uint32(f[8:]))
	if off+n > uint64(len(data)-footerSize) {
		return nil, nil, fmt.Errorf("%w: index outside object", errCorrupt)
	}
	x, err := parseIndex(data[off : off+n])
	if err != nil {
		return nil, nil, err
	}
	blocks := make([]*block, len(x.blocks))
	for i, br := range x.blocks {
		if br.off < 0 || br.n < 0 || uint64(br.off+br.n) > off {
			return nil, nil, fmt.Errorf("%w: block %d outside data", errCorrupt, i)
		}
		if blocks[i], err = parseBlock(data[br.off:br.off+br.n], format); err != nil {
			return nil, nil, err
		}
	}
	return x, blocks, nil
}
