package connector

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// FileBacklog collects how many bytes a query's file sources have still
// to read: the rest of the file each is in plus the files listed and not
// yet opened. Sources publish it when they open or finish a file and
// every backlogEvery lines (not per record); SHOW JOBS reads it. A
// compressed file's remaining bytes are not known (its offset counts
// decompressed bytes), so a source with one pending says unknown. The
// zero value is ready; safe from any goroutine.
type FileBacklog struct {
	mu    sync.Mutex
	left  map[*lineReader]int64 // -1: unknown
	total map[*lineReader]int64 // the most each source had left: its total
	lines int64                 // lines the sources read (as of their last update)
}

// backlogEvery is how many lines a file source reads between updates.
const backlogEvery = 1024

// set records r's remaining bytes, what it had to read when it opened
// its current file (n plus that file's bytes already read: the largest
// such value is the source's total), and the lines it read since its
// last update.
func (b *FileBacklog) set(r *lineReader, n, total, lines int64) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.left == nil {
		b.left, b.total = map[*lineReader]int64{}, map[*lineReader]int64{}
	}
	b.left[r] = n
	b.total[r] = max(b.total[r], total, n)
	b.lines += lines
}

// closed forgets a closed source (a crashed job's, replaced by its
// restore) unless it read everything: a finished one stays at 0.
func (b *FileBacklog) closed(r *lineReader) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.left[r] != 0 {
		delete(b.left, r)
		delete(b.total, r)
	}
}

// FileProgress is how far a query's file sources are: Left of Total
// bytes still to read (Total is what they had to read when they opened
// their first file, that file whole: a job restored mid-file counts the
// bytes before its checkpoint as read), Lines read; Known is false when
// there is no file source or one cannot tell (compressed).
type FileProgress struct {
	Left, Total, Lines int64
	Known              bool
}

// Progress is the sources' progress (`clink run`'s progress line).
func (b *FileBacklog) Progress() FileProgress {
	n, ok := b.Bytes()
	b.mu.Lock()
	defer b.mu.Unlock()
	p := FileProgress{Left: n, Lines: b.lines, Known: ok}
	for _, t := range b.total {
		p.Total += t
	}
	return p
}

// Bytes is the sum over the query's file sources; ok is false when there
// is none or one of them cannot tell.
func (b *FileBacklog) Bytes() (n int64, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, v := range b.left {
		if v < 0 {
			return 0, false
		}
		n += v
	}
	return n, len(b.left) > 0
}

// publishBacklog computes r's remaining bytes and records them. The
// pending files' sizes are summed once per file opened or listing (the
// rest field), the current file's rest every call.
func (r *lineReader) publishBacklog() {
	if r.env.FileBacklog == nil {
		return
	}
	if r.restFor != r.curKey() || !r.restKnown {
		r.rest, r.restFor, r.restKnown = r.pendingBytes(), r.curKey(), true
	}
	n, total := r.rest, r.rest
	if r.cur != nil && n >= 0 {
		if r.cur.size < 0 {
			n, total = -1, -1
		} else {
			n += max(r.cur.size-r.cur.lb.off, 0)
			total += r.cur.size
		}
	}
	r.env.FileBacklog.set(r, n, total, r.unpublished)
	r.unpublished = 0
}

// curKey is the current file's key ("" between files).
func (r *lineReader) curKey() string {
	if r.cur == nil {
		return ""
	}
	return r.cur.key
}

// pendingBytes sums the sizes of the listed files not read yet (-1: one
// is compressed or gone).
func (r *lineReader) pendingBytes() int64 {
	var n int64
	for _, k := range r.listed {
		if r.done[k] || r.cur != nil && r.cur.key == k {
			continue
		}
		path := r.set.pathOf(k)
		fi, err := os.Stat(path)
		if err != nil || compressed(path) {
			return -1
		}
		n += fi.Size()
	}
	return n
}

// compressed reports whether openStream decompresses path.
func compressed(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".gz", ".zst":
		return true
	}
	return false
}
