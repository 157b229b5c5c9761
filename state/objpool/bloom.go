package objpool

import (
	"encoding/binary"

	"clink/state"
)

// bloom is a run's Bloom filter over its internal keys (10 bits per key,
// 7 probes, ~1% false positives), stored at the end of the run's index, so
// a read skips the data blocks of runs that cannot hold its key.
type bloom struct {
	bits []byte
	k    uint64
}

const bloomBitsPerKey, bloomProbes = 10, 7

func bloomHashes(ik []byte) (uint64, uint64) {
	return state.Hash(0x62, ik), state.Hash(0x6c6f6f6d, ik) | 1
}

func newBloom(recs []record) *bloom {
	hs := make([][2]uint64, len(recs))
	for i, r := range recs {
		hs[i][0], hs[i][1] = bloomHashes(r.ik)
	}
	return bloomOf(hs)
}

// bloomOf builds the filter of the keys whose bloomHashes are hs.
func bloomOf(hs [][2]uint64) *bloom {
	b := emptyBloom(len(hs))
	for _, h := range hs {
		b.add(h[0], h[1])
	}
	return b
}

// emptyBloom returns a filter sized for n keys.
func emptyBloom(n int) *bloom {
	nbits := max(64, n*bloomBitsPerKey)
	return &bloom{bits: make([]byte, (nbits+7)/8), k: bloomProbes}
}

// add sets the bits of the key whose bloomHashes are h1, h2.
func (b *bloom) add(h1, h2 uint64) {
	n := uint64(len(b.bits) * 8)
	for i := uint64(0); i < b.k; i++ {
		bit := (h1 + i*h2) % n
		b.bits[bit/8] |= 1 << (bit % 8)
	}
}

// mayContain reports false only if ik is certainly not in the run. A nil
// or empty filter says yes.
func (b *bloom) mayContain(ik []byte) bool {
	if b == nil || len(b.bits) == 0 {
		return true
	}
	n := uint64(len(b.bits) * 8)
	h1, h2 := bloomHashes(ik)
	for i := uint64(0); i < b.k; i++ {
		bit := (h1 + i*h2) % n
		if b.bits[bit/8]&(1<<(bit%8)) == 0 {
			return false
		}
	}
	return true
}

func (b *bloom) appendTo(buf []byte) []byte {
	buf = binary.AppendUvarint(buf, b.k)
	buf = binary.AppendUvarint(buf, uint64(len(b.bits)))
	return append(buf, b.bits...)
}

func parseBloom(buf []byte) (*bloom, bool) {
	k, n1 := binary.Uvarint(buf)
	if n1 <= 0 || k == 0 || k > 32 {
		return nil, false
	}
	l, n2 := binary.Uvarint(buf[n1:])
	if n2 <= 0 || l > uint64(len(buf)-n1-n2) {
		return nil, false
	}
	return &bloom{k: k, bits: buf[n1+n2 : n1+n2+int(l)]}, true
}
