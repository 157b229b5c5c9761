package objpool

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sort"

	"clink/state"
	"clink/state/checksum"
)

// A run is one immutable object holding sorted (operator, key) entries of
// one partition: data blocks, a sparse index (first key, extent and, from
// format 3, checksum of each block) and a footer. Readers fetch the index,
// then only the blocks they need, with ranged GETs. docs/object-layout.md
// has the byte format.

const (
	runMagicV1 = "CLR1" // format 1: blocks are bare records
	runMagicV2 = "CLR2" // format 2: each block ends in a record-offset trailer
	// format 3: the index names its run and pins each block's checksum;
	// the index and footer are checksummed (RunRef.CRC).
	runMagicV3 = "CLR3"
	footerSize = 16 // formats 1 and 2
	// footerSizeV3: index offset, length, CRC-32C, magic.
	footerSizeV3 = 20
	flagDelete   = 1
	// runFormat is the format encodeRun writes (RunRef.Format).
	runFormat = 3
)

var errCorrupt = state.ErrCorrupt

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
	// Format is the run's format: 0 or 1 (bare records, the first
	// layout), 2 (blocks searchable in place, see block.go) or 3 (2, with
	// the run's identity and checksums in its index and footer).
	Format int `json:"format,omitempty"`
	// CRC (format 3) is the CRC-32C of the run's index and footer, as its
	// footer records it: the manifest pins the run's bytes.
	CRC uint32 `json:"crc,omitempty"`
}

// format is the run's block format, 1 for runs written before formats
// were recorded.
func (r *RunRef) format() int { return max(r.Format, 1) }

// covers reports whether ik lies within the run's key range.
func (r *RunRef) covers(ik []byte) bool {
	return bytes.Compare(ik, r.Min) >= 0 && bytes.Compare(ik, r.Max) <= 0
}

// footerLen is the footer size of a run of the given format.
func footerLen(format int) int64 {
	if format >= 3 {
		return footerSizeV3
	}
	return footerSize
}

// blockRef locates one data block of a run.
type blockRef struct {
	first []byte
	off   int64
	n     int64
	crc   uint32 // format 3: the block's checksum (its trailer's last field)
}

// runIndex is a run's parsed sparse index.
type runIndex struct {
	blocks []blockRef
	filter *bloom
	key    string // format 3: the run's own object key
	count  int    // format 3: its record count
}

// find returns the block that may hold ik, or -1.
func (x *runIndex) find(ik []byte) int {
	i := sort.Search(len(x.blocks), func(i int) bool { return bytes.Compare(x.blocks[i].first, ik) > 0 })
	return i - 1
}

// detached is x with its own copies of the bytes it shares with the
// buffer it was parsed from.
func (x *runIndex) detached() *runIndex {
	cp := *x
	cp.blocks = make([]blockRef, len(x.blocks))
	n := 0
	for _, b := range x.blocks {
		n += len(b.first)
	}
	keys := make([]byte, 0, n)
	for i, b := range x.blocks {
		start := len(keys)
		keys = append(keys, b.first...)
		b.first = keys[start:len(keys):len(keys)]
		cp.blocks[i] = b
	}
	if x.filter != nil {
		cp.filter = &bloom{bits: bytes.Clone(x.filter.bits), k: x.filter.k}
	}
	return &cp
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

// parseIndex decodes a run's index block of the given format.
func parseIndex(b []byte, format int) (*runIndex, error) {
	x := &runIndex{}
	if format >= 3 {
		l, k := binary.Uvarint(b)
		if k <= 0 || l > uint64(len(b)-k) {
			return nil, fmt.Errorf("%w: bad index header", errCorrupt)
		}
		x.key, b = string(b[k:k+int(l)]), b[k+int(l):]
		c, k := binary.Uvarint(b)
		if k <= 0 || c > uint64(len(b))*8 {
			return nil, fmt.Errorf("%w: bad index record count", errCorrupt)
		}
		x.count, b = int(c), b[k:]
	}
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, fmt.Errorf("%w: bad index header", errCorrupt)
	}
	b = b[k:]
	x.blocks = make([]blockRef, 0, n)
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
		br := blockRef{first: first, off: int64(fields[1]), n: int64(fields[2])}
		if format >= 3 {
			if len(b) < 4 {
				return nil, fmt.Errorf("%w: bad index entry %d", errCorrupt, i)
			}
			br.crc, b = binary.LittleEndian.Uint32(b), b[4:]
		}
		x.blocks = append(x.blocks, br)
	}
	f, ok := parseBloom(b)
	if !ok {
		return nil, fmt.Errorf("%w: bad bloom filter", errCorrupt)
	}
	x.filter = f
	return x, nil
}

// checkTail verifies a format-3 run's index and footer (tail: the bytes
// from ref.IndexOff to the end of the object) against ref and returns the
// index bytes.
func checkTail(ref *RunRef, tail []byte) ([]byte, error) {
	if int64(len(tail)) != ref.IndexLen+footerSizeV3 {
		return nil, fmt.Errorf("%w: index and footer are %d bytes, the manifest says %d", errCorrupt, len(tail), ref.IndexLen+footerSizeV3)
	}
	f := tail[ref.IndexLen:]
	if string(f[16:]) != runMagicV3 {
		return nil, fmt.Errorf("%w: footer magic %q, want %q", errCorrupt, f[16:], runMagicV3)
	}
	sum := binary.LittleEndian.Uint32(f[12:])
	if got := checksum.CRC(tail[:ref.IndexLen+12]); got != sum {
		return nil, fmt.Errorf("%w: index checksum mismatch (crc32c %08x, footer says %08x)", errCorrupt, got, sum)
	}
	if off, n := binary.BigEndian.Uint64(f), int64(binary.BigEndian.Uint32(f[8:])); int64(off) != ref.IndexOff || n != ref.IndexLen {
		return nil, fmt.Errorf("%w: footer places the index at %d+%d, the manifest at %d+%d", errCorrupt, off, n, ref.IndexOff, ref.IndexLen)
	}
	if sum != ref.CRC {
		return nil, fmt.Errorf("%w: run checksum %08x, the manifest says %08x (another run's bytes?)", errCorrupt, sum, ref.CRC)
	}
	return tail[:ref.IndexLen], nil
}

// checkIndex verifies a format-3 index against the manifest's entry: it
// names the run, counts its records, and its blocks tile the data region.
func checkIndex(ref *RunRef, x *runIndex) error {
	if x.key != ref.Key {
		return fmt.Errorf("%w: the object holds run %s", errCorrupt, x.key)
	}
	if x.count != ref.Count {
		return fmt.Errorf("%w: %d records, the manifest says %d", errCorrupt, x.count, ref.Count)
	}
	var end int64
	for i, b := range x.blocks {
		if b.off != end || b.n < 8 {
			return fmt.Errorf("%w: block %d at %d+%d, want it at %d", errCorrupt, i, b.off, b.n, end)
		}
		end += b.n
	}
	if end != ref.IndexOff {
		return fmt.Errorf("%w: blocks end at %d, the index starts at %d", errCorrupt, end, ref.IndexOff)
	}
	return nil
}

// runOfData returns what a whole run object says about itself: its format
// (from the footer's magic), index offset and length, and (format 3)
// checksum, as a RunRef of no key.
func runOfData(data []byte) (RunRef, error) {
	if len(data) < footerSize {
		return RunRef{}, fmt.Errorf("%w: bad footer", errCorrupt)
	}
	ref := RunRef{Size: int64(len(data))}
	switch string(data[len(data)-4:]) {
	case runMagicV1:
		ref.Format = 1
	case runMagicV2:
		ref.Format = 2
	case runMagicV3:
		ref.Format = 3
	default:
		return RunRef{}, fmt.Errorf("%w: bad footer", errCorrupt)
	}
	fl := footerLen(ref.Format)
	if int64(len(data)) < fl {
		return RunRef{}, fmt.Errorf("%w: bad footer", errCorrupt)
	}
	f := data[int64(len(data))-fl:]
	ref.IndexOff, ref.IndexLen = int64(binary.BigEndian.Uint64(f)), int64(binary.BigEndian.Uint32(f[8:]))
	if ref.IndexOff < 0 || ref.IndexOff+ref.IndexLen != int64(len(data))-fl {
		return RunRef{}, fmt.Errorf("%w: index outside object", errCorrupt)
	}
	if ref.Format >= 3 {
		ref.CRC = binary.LittleEndian.Uint32(f[12:])
	}
	return ref, nil
}

// parseRun decodes and verifies a whole run object of any format against
// want, its manifest entry (nil: whatever the footer says, for tests and
// tools); the footer's magic says which format it is.
func parseRun(data []byte, want *RunRef) (*runIndex, []*block, error) {
	ref, err := runOfData(data)
	if err != nil {
		return nil, nil, err
	}
	if want != nil {
		if ref.Size != want.Size {
			return nil, nil, fmt.Errorf("%w: %d bytes, the manifest says %d", errCorrupt, ref.Size, want.Size)
		}
		if ref.Format != want.format() {
			return nil, nil, fmt.Errorf("%w: run format %d, the manifest says %d", errCorrupt, ref.Format, want.format())
		}
		ref.Key, ref.Count = want.Key, want.Count
		if ref.Format >= 3 {
			ref.CRC = want.CRC
		}
	}
	ib := data[ref.IndexOff : ref.IndexOff+ref.IndexLen]
	if ref.Format >= 3 {
		if ib, err = checkTail(&ref, data[ref.IndexOff:]); err != nil {
			return nil, nil, err
		}
	}
	x, err := parseIndex(ib, ref.Format)
	if err != nil {
		return nil, nil, err
	}
	if ref.Format >= 3 {
		if want == nil {
			ref.Key, ref.Count = x.key, x.count
		}
		if err := checkIndex(&ref, x); err != nil {
			return nil, nil, err
		}
	}
	blocks := make([]*block, len(x.blocks))
	for i, br := range x.blocks {
		if br.off < 0 || br.n < 0 || br.off+br.n > ref.IndexOff {
			return nil, nil, fmt.Errorf("%w: block %d outside data", errCorrupt, i)
		}
		if blocks[i], err = parseBlockAt(data[br.off:br.off+br.n], ref.Format, br); err != nil {
			return nil, nil, err
		}
	}
	return x, blocks, nil
}

// parseBlockAt parses block br of a run of the given format; a format-3
// block must carry the checksum its index recorded.
func parseBlockAt(b []byte, format int, br blockRef) (*block, error) {
	blk, err := parseBlock(b, format)
	if err != nil {
		return nil, fmt.Errorf("block at %d+%d: %w", br.off, br.n, err)
	}
	if format >= 3 {
		if sum := binary.LittleEndian.Uint32(b[len(b)-4:]); sum != br.crc {
			return nil, fmt.Errorf("block at %d+%d: %w: checksum %08x, the index says %08x", br.off, br.n, errCorrupt, sum, br.crc)
		}
	}
	return blk, nil
}
