// Package checksum is the CRC-32C (Castagnoli, as pebble and RocksDB use)
// that every durable object clink writes carries, and the sealed form of
// its small text objects (JSON manifests, CURRENT, a file sink's commit
// record): the body, then one line "#crc32c:XXXXXXXX" with the checksum of
// the body. A sealed object stays readable (head -1 CURRENT | jq); any flipped,
// dropped or appended byte breaks the seal.
package checksum

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"strconv"
)

// Table is the CRC-32C table.
var Table = crc32.MakeTable(crc32.Castagnoli)

// CRC is the CRC-32C of b.
func CRC(b []byte) uint32 { return crc32.Checksum(b, Table) }

// Update extends crc (of some bytes) with b.
func Update(crc uint32, b []byte) uint32 { return crc32.Update(crc, Table, b) }

const (
	prefix     = "\n#crc32c:"
	trailerLen = len(prefix) + 8 + 1
)

// ErrMismatch: a sealed object's body does not match its checksum.
var ErrMismatch = errors.New("checksum mismatch")

// Seal returns body followed by its checksum line.
func Seal(body []byte) []byte {
	out := make([]byte, 0, len(body)+trailerLen)
	out = append(out, body...)
	return fmt.Appendf(out, "%s%08x\n", prefix, CRC(body))
}

// Cut reports whether b, which Unseal found unsealed, holds a checksum
// line that is not at its end: an object cut short or extended.
func Cut(b []byte) bool { return bytes.Contains(b, []byte(prefix)) }

// Unseal returns the body of a sealed object. sealed is false (and err
// nil) when b does not end in a checksum line at all (an object written
// before objects were sealed, or one whose end was cut or extended: the
// caller decides which by what the body says); err wraps ErrMismatch when
// the line is there and the body does not match it.
func Unseal(b []byte) (body []byte, sealed bool, err error) {
	if len(b) < trailerLen || b[len(b)-1] != '\n' || !bytes.HasPrefix(b[len(b)-trailerLen:], []byte(prefix)) {
		return b, false, nil
	}
	hex := b[len(b)-trailerLen+len(prefix) : len(b)-1]
	for _, c := range hex {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return b, false, nil // Seal writes lower-case hex only
		}
	}
	want, perr := strconv.ParseUint(string(hex), 16, 32)
	if perr != nil {
		return b, false, nil
	}
	body = b[:len(b)-trailerLen]
	if got := CRC(body); got != uint32(want) {
		return body, true, fmt.Errorf("%w: crc32c %08x, recorded %08x", ErrMismatch, got, want)
	}
	return body, true, nil
}
