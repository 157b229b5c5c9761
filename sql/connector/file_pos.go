package connector

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// filePosVersion starts a file source position. The first position format
// was 16 bytes, offset then line, both big-endian: its first byte is 0 for
// any offset below 2^56, so a leading 0xF1 tells the formats apart.
const filePosVersion = 0xF1

// filePos is a position inside one file: the byte offset of the next line
// (in decompressed bytes for a compressed file) and the lines read.
type filePos struct {
	off  int64
	line int
}

// fileCheckpoint is a file source's position: the files finished (by key,
// in the order they were finished) and, when a file is open, which one and
// where in it.
type fileCheckpoint struct {
	done   []string
	hasCur bool
	cur    string
	pos    filePos
}

// encode is version, flags (1: a file is open), offset, line, the open
// file's key, the number of finished files and their keys; integers are
// uvarints, keys length-prefixed.
func (c fileCheckpoint) encode() []byte {
	b := []byte{filePosVersion, 0}
	if c.hasCur {
		b[1] = 1
	}
	b = binary.AppendUvarint(b, uint64(c.pos.off))
	b = binary.AppendUvarint(b, uint64(c.pos.line))
	b = appendKey(b, c.cur)
	b = binary.AppendUvarint(b, uint64(len(c.done)))
	for _, k := range c.done {
		b = appendKey(b, k)
	}
	return b
}

func appendKey(b []byte, k string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(k))), k...)
}

var errFilePos = errors.New("file position: malformed")

// decodeFileCheckpoint reads either format; a position of the first
// (single-file) format names the open file first, the key of the set's
// first file.
func decodeFileCheckpoint(b []byte, first string) (fileCheckpoint, error) {
	if len(b) == 16 && b[0] == 0 {
		p := filePos{off: int64(binary.BigEndian.Uint64(b)), line: int(binary.BigEndian.Uint64(b[8:]))}
		return fileCheckpoint{hasCur: true, cur: first, pos: p}, nil
	}
	if len(b) < 2 || b[0] != filePosVersion || b[1] > 1 {
		return fileCheckpoint{}, fmt.Errorf("file position: want 16 bytes or version %#x", filePosVersion)
	}
	d := posDecoder{b: b[2:]}
	c := fileCheckpoint{hasCur: b[1] == 1}
	c.pos.off = int64(d.uint())
	c.pos.line = int(d.uint())
	c.cur = d.key()
	n := d.uint()
	for i := uint64(0); i < n && d.err == nil; i++ {
		c.done = append(c.done, d.key())
	}
	if d.err != nil || len(d.b) != 0 || c.pos.off < 0 || c.pos.line < 0 {
		return fileCheckpoint{}, errFilePos
	}
	return c, nil
}

// posDecoder reads uvarints and keys, remembering the first error.
type posDecoder struct {
	b   []byte
	err error
}

func (d *posDecoder) uint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errFilePos
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *posDecoder) key() string {
	n := d.uint()
	if d.err != nil || n > uint64(len(d.b)) {
		d.err = errFilePos
		return ""
	}
	k := string(d.b[:n])
	d.b = d.b[n:]
	return k
}
