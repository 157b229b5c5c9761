package connector

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// defaultReadBuffer is a file source's read buffer: big enough that a read
// system call moves many lines, small enough to not matter per source.
const defaultReadBuffer = 64 << 10

// lineBuf splits a byte stream into lines through one buffer, so reading
// is linear in the stream and memory is bounded whatever the file size:
// the buffer grows only for a line longer than itself, and never past the
// line limit (a longer line is skipped and reported, not held).
type lineBuf struct {
	r          io.Reader
	buf        []byte
	start, end int   // unread bytes are buf[start:end]
	scan       int   // bytes of buf[start:end] already known to hold no '\n'
	off        int64 // stream offset of buf[start]
	max        int   // the longest line (without its '\n') accepted
	err        error // the read error that ended the stream (io.EOF at the end)
}

func newLineBuf(r io.Reader, size, max int) *lineBuf {
	if size <= 0 {
		size = defaultReadBuffer
	}
	return &lineBuf{r: r, buf: make([]byte, min(size, max+1)), max: max}
}

// next returns the next line without its '\n' (valid until the next call)
// and whether there was one. A line longer than max comes back with
// tooLong set and no bytes: it was skipped up to its newline. Offsets
// advance past the newline, so off is always where the next line starts.
func (b *lineBuf) next() (line []byte, tooLong, ok bool, err error) {
	for {
		if i := bytes.IndexByte(b.buf[b.start+b.scan:b.end], '\n'); i >= 0 {
			n := b.scan + i
			line = b.buf[b.start : b.start+n]
			b.consume(n + 1)
			if n > b.max {
				return nil, true, true, nil
			}
			return line, false, true, nil
		}
		b.scan = b.end - b.start
		if b.scan > b.max {
			return b.skipLong()
		}
		if b.err != nil {
			if !errors.Is(b.err, io.EOF) {
				return nil, false, false, b.err
			}
			if b.start == b.end {
				return nil, false, false, nil
			}
			line = b.buf[b.start:b.end]
			b.consume(len(line))
			return line, false, true, nil
		}
		b.fill()
	}
}

func (b *lineBuf) consume(n int) {
	b.start += n
	b.off += int64(n)
	b.scan = 0
}

// fill moves the unread bytes to the front, grows a full buffer (up to
// one byte past the line limit, enough to tell a line is too long) and
// reads once.
func (b *lineBuf) fill() {
	if b.start > 0 {
		b.end = copy(b.buf, b.buf[b.start:b.end])
		b.start = 0
	}
	if b.end == len(b.buf) {
		grown := make([]byte, min(2*len(b.buf), b.max+1))
		copy(grown, b.buf[:b.end])
		b.buf = grown
	}
	for empty := 0; ; empty++ {
		n, err := b.r.Read(b.buf[b.end:])
		b.end += n
		if err != nil {
			b.err = err
			return
		}
		if n > 0 {
			return
		}
		if empty == 100 {
			b.err = io.ErrNoProgress
			return
		}
	}
}

// skipLong drops a line longer than the limit: everything up to and
// including its newline (or the end of the stream).
func (b *lineBuf) skipLong() ([]byte, bool, bool, error) {
	for {
		if i := bytes.IndexByte(b.buf[b.start:b.end], '\n'); i >= 0 {
			b.consume(i + 1)
			return nil, true, true, nil
		}
		b.consume(b.end - b.start)
		if b.err != nil {
			if errors.Is(b.err, io.EOF) {
				return nil, true, true, nil
			}
			return nil, false, false, b.err
		}
		b.fill()
	}
}

// skipTo moves forward to stream offset target: within the buffer, by
// seeking s when there is one (a plain file), else by reading and
// dropping bytes (a decompressed stream).
func (b *lineBuf) skipTo(target int64, s io.Seeker) error {
	if target < b.off {
		return fmt.Errorf("offset %d is before %d", target, b.off)
	}
	if n := target - b.off; n <= int64(b.end-b.start) {
		b.consume(int(n))
		return nil
	}
	if s != nil {
		if _, err := s.Seek(target, io.SeekStart); err != nil {
			return err
		}
	} else {
		skip := target - b.off - int64(b.end-b.start)
		if n, err := io.CopyN(io.Discard, b.r, skip); err != nil {
			if errors.Is(err, io.EOF) {
				return fmt.Errorf("offset %d beyond the file (%d bytes)", target, target-skip+n)
			}
			return err
		}
	}
	b.start, b.end, b.scan, b.off, b.err = 0, 0, 0, target, nil
	return nil
}
