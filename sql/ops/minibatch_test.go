package ops

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// TestFixLength checks the in-place length prefix against
// binary.AppendUvarint for parts around the one-byte boundary.
func TestFixLength(t *testing.T) {
	for _, n := range []int{0, 1, 127, 128, 300, 16383, 16384, 70000} {
		part := bytes.Repeat([]byte{0xab}, n)
		want := append(binary.AppendUvarint([]byte("head"), uint64(n)), part...)
		want = append(want, 'x')
		b := append([]byte("head"), 0)
		b = append(b, part...)
		got := append(fixLength(b, 4), 'x')
		if !bytes.Equal(got, want) {
			t.Errorf("part of %d bytes: prefix %x, want %x", n, got[4:min(len(got), 8)], want[4:min(len(want), 8)])
		}
	}
}
