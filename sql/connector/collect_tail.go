package connector

import "clink/sql/ops"

// tail is a ring of the newest changes a view may show; change numbers
// are absolute (the i-th change ever emitted), so readers keep a cursor.
type tail struct {
	buf   []ops.Change
	start int // ring index of the oldest kept change
	count int
}

// push appends ch, dropping the oldest change once capacity is reached.
func (t *tail) push(ch ops.Change, capacity int) {
	if len(t.buf) < capacity {
		t.buf = append(t.buf, ch)
		t.count++
		return
	}
	if t.count < len(t.buf) {
		t.buf[(t.start+t.count)%len(t.buf)] = ch
		t.count++
		return
	}
	t.buf[t.start] = ch
	t.start = (t.start + 1) % len(t.buf)
}

// get is the i-th kept change, oldest first.
func (t *tail) get(i int) ops.Change { return t.buf[(t.start+i)%len(t.buf)] }

// oldest is the number of the oldest kept change, given n changes so far.
func (t *tail) oldest(n int64) int64 { return n - int64(t.count) }

// from copies the kept changes numbered from on.
func (t *tail) from(from, n int64) []ops.Change {
	first := max(from, t.oldest(n))
	if first >= n {
		return nil
	}
	out := make([]ops.Change, 0, n-first)
	for i := int(first - t.oldest(n)); i < t.count; i++ {
		out = append(out, t.get(i))
	}
	return out
}

// at is change number at, or the oldest kept after it (skipped: how many
// fell out of the tail before the reader got to them; with nothing kept,
// every change from at on).
func (t *tail) at(at, n int64) (ops.Change, int64, bool) {
	if at >= n {
		return ops.Change{}, 0, false
	}
	if t.count == 0 {
		return ops.Change{}, n - at, false
	}
	skipped := max(0, t.oldest(n)-at)
	return t.get(int(at + skipped - t.oldest(n))), skipped, true
}

// cut forgets the newest drop changes (a rewind).
func (t *tail) cut(drop int64) {
	if drop >= int64(t.count) {
		*t = tail{buf: t.buf[:0]}
		return
	}
	t.count -= int(drop)
	if len(t.buf) > t.count && t.start == 0 {
		t.buf = t.buf[:t.count]
	}
}
