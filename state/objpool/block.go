package objpool

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"clink/state/checksum"
)

// A data block holds records sorted by internal key:
//
//	record  = uvarint(len ik) ik  flags(1)  uvarint(key group)  uvarint(len value) value
//	format 1: block = record...
//	format 2: block = record...  offset(uint32 LE)...  count(uint32 LE)  crc32c(uint32 LE)
//
// The format-2 trailer gives each record's offset within the block, so a
// point read binary-searches the block's bytes in place: a miss costs one
// ranged read, a CRC-32C of the block (hardware-assisted) and about
// log2(records) key comparisons, and the block cache holds the bytes as
// read (no parsed copy, a third of the parsed size). The checksum covers
// everything before it, so corruption is refused when the block is read,
// not found record by record.

// block is one data block as the reader keeps it: format 2 as its bytes,
// format 1 (written by older versions) parsed into records.
type block struct {
	data []byte   // format 2: the records
	offs []byte   // format 2: n little-endian uint32 record offsets into data
	n    int      // format 2: record count
	recs []record // format 1
}

// castagnoli is the CRC-32C table of block checksums.
var castagnoli = checksum.Table

// appendTrailer appends a format-2 block's trailer to buf, whose last
// bytes from start are the block's records: the offsets of its records
// within the block, their count and the checksum of the block so far.
func appendTrailer(buf []byte, start int, offs []uint32) []byte {
	for _, o := range offs {
		buf = binary.LittleEndian.AppendUint32(buf, o)
	}
	buf = binary.LittleEndian.AppendUint32(buf, uint32(len(offs)))
	return binary.LittleEndian.AppendUint32(buf, crc32.Checksum(buf[start:], castagnoli))
}

// minRecord is the smallest encoded record: four one-byte fields.
const minRecord = 4

// parseBlock decodes one data block of the given format. A format-2 block
// is not decoded: its checksum and offsets are checked, and lookup still
// bounds-checks what it decodes.
func parseBlock(b []byte, format int) (*block, error) {
	if format <= 1 {
		recs, err := decodeRecords(b)
		if err != nil {
			return nil, err
		}
		return &block{recs: recs}, nil
	}
	if len(b) < 8 {
		return nil, fmt.Errorf("%w: block without trailer", errCorrupt)
	}
	sum := binary.LittleEndian.Uint32(b[len(b)-4:])
	b = b[:len(b)-4]
	if crc32.Checksum(b, castagnoli) != sum {
		return nil, fmt.Errorf("%w: block checksum mismatch", errCorrupt)
	}
	n := uint64(binary.LittleEndian.Uint32(b[len(b)-4:]))
	if n > uint64(len(b)-4)/(4+minRecord) {
		return nil, fmt.Errorf("%w: block record count %d overflows %d bytes", errCorrupt, n, len(b))
	}
	dataLen := len(b) - 4 - 4*int(n)
	blk := &block{data: b[:dataLen], offs: b[dataLen : len(b)-4], n: int(n)}
	prev := -1
	for i := range blk.n {
		off := int(binary.LittleEndian.Uint32(blk.offs[4*i:]))
		if off <= prev || off+minRecord > dataLen || (i == 0 && off != 0) {
			return nil, fmt.Errorf("%w: block record offset %d", errCorrupt, i)
		}
		prev = off
	}
	return blk, nil
}

// decodeRecord decodes the record at the start of b and returns its length.
// The record aliases b.
func decodeRecord(b []byte) (record, int, error) {
	var r record
	all := len(b)
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return r, 0, fmt.Errorf("%w: bad record key", errCorrupt)
	}
	r.ik, b = b[k:k+int(n)], b[k+int(n):]
	if len(b) == 0 {
		return r, 0, fmt.Errorf("%w: truncated record", errCorrupt)
	}
	r.deleted = b[0]&flagDelete != 0
	b = b[1:]
	kg, k := binary.Uvarint(b)
	if k <= 0 || kg > 1<<31 {
		return r, 0, fmt.Errorf("%w: bad record key group", errCorrupt)
	}
	r.keyGroup, b = int(kg), b[k:]
	n, k = binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return r, 0, fmt.Errorf("%w: bad record value", errCorrupt)
	}
	if !r.deleted {
		r.value = b[k : k+int(n)]
	}
	b = b[k+int(n):]
	return r, all - len(b), nil
}

// decodeRecords decodes consecutive records filling b.
func decodeRecords(b []byte) ([]record, error) {
	var recs []record
	for len(b) > 0 {
		r, k, err := decodeRecord(b)
		if err != nil {
			return nil, err
		}
		recs = append(recs, r)
		b = b[k:]
	}
	return recs, nil
}

// keyAt returns the internal key of a format-2 block's record i, or false
// when the record is corrupt.
func (b *block) keyAt(i int) ([]byte, bool) {
	off := int(binary.LittleEndian.Uint32(b.offs[4*i:]))
	l, k := binary.Uvarint(b.data[off:])
	if k <= 0 || l > uint64(len(b.data)-off-k) {
		return nil, false
	}
	return b.data[off+k : off+k+int(l)], true
}

// end is where a format-2 block's record i ends: the next record's offset.
func (b *block) end(i int) int {
	if i+1 < b.n {
		return int(binary.LittleEndian.Uint32(b.offs[4*(i+1):]))
	}
	return len(b.data)
}

// lookup returns the record under ik, aliasing the block. It allocates
// nothing. A format-2 record it returns must fill exactly the span its
// offsets give it.
func (b *block) lookup(ik []byte) (record, bool, error) {
	if b.data == nil {
		i, ok := searchRecords(b.recs, ik)
		if ok {
			return b.recs[i], true, nil
		}
		return record{}, false, nil
	}
	lo, hi := 0, b.n
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		k, ok := b.keyAt(mid)
		if !ok {
			return record{}, false, fmt.Errorf("%w: block record %d", errCorrupt, mid)
		}
		if bytes.Compare(k, ik) < 0 {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo == b.n {
		return record{}, false, nil
	}
	if k, ok := b.keyAt(lo); !ok || !bytes.Equal(k, ik) {
		return record{}, false, nil
	}
	off, end := int(binary.LittleEndian.Uint32(b.offs[4*lo:])), b.end(lo)
	if end < off {
		return record{}, false, fmt.Errorf("%w: block record %d", errCorrupt, lo)
	}
	r, n, err := decodeRecord(b.data[off:end])
	if err != nil || off+n != end {
		return record{}, false, fmt.Errorf("%w: block record %d does not fill its span", errCorrupt, lo)
	}
	return r, true, nil
}

// searchRecords finds ik among sorted records.
func searchRecords(recs []record, ik []byte) (int, bool) {
	lo, hi := 0, len(recs)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if bytes.Compare(recs[mid].ik, ik) < 0 {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo, lo < len(recs) && bytes.Equal(recs[lo].ik, ik)
}

// count is how many records the block holds.
func (b *block) count() int {
	if b.data == nil {
		return len(b.recs)
	}
	return b.n
}

// at decodes record i of the block, aliasing it; a format-2 record must
// fill exactly the span its offsets give it. Compaction reads a block
// record by record through it, so a merge holds the blocks' bytes and not
// a decoded copy of every record in them.
func (b *block) at(i int) (record, error) {
	if b.data == nil {
		return b.recs[i], nil
	}
	off, end := int(binary.LittleEndian.Uint32(b.offs[4*i:])), b.end(i)
	if end < off {
		return record{}, fmt.Errorf("%w: block record %d", errCorrupt, i)
	}
	r, n, err := decodeRecord(b.data[off:end])
	if err != nil || off+n != end {
		return record{}, fmt.Errorf("%w: block record %d does not fill its span", errCorrupt, i)
	}
	return r, nil
}

// records returns the block's records in key order (aliasing the block).
func (b *block) records() ([]record, error) {
	if b.data == nil {
		return b.recs, nil
	}
	recs, err := decodeRecords(b.data)
	if err == nil && len(recs) != b.n {
		err = fmt.Errorf("%w: block holds %d records, its trailer %d", errCorrupt, len(recs), b.n)
	}
	return recs, err
}

// size is what the block cache charges for the block.
// detached is b with its own copy of the bytes it shares with the buffer
// it was parsed from (format 1 blocks are decoded into records and may
// still share their keys and values).
func (b *block) detached() *block {
	if b.data == nil {
		return b
	}
	buf := make([]byte, len(b.data)+len(b.offs))
	copy(buf, b.data)
	copy(buf[len(b.data):], b.offs)
	return &block{data: buf[:len(b.data):len(b.data)], offs: buf[len(b.data):], n: b.n}
}

func (b *block) size() int64 {
	if b.data != nil {
		return int64(len(b.data)+len(b.offs)) + 64
	}
	n := int64(32)
	for _, r := range b.recs {
		n += int64(len(r.ik)+len(r.value)) + 56
	}
	return n
}
