package connector

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"time"

	"clink/engine/async"
)

// lineState is what lineReader.line found.
type lineState uint8

const (
	lineOK   lineState = iota // a line
	lineNone                  // nothing yet (a monitored path: poll again)
	lineEnd                   // the end of every file
)

// openFile is the file a lineReader is in.
type openFile struct {
	key   string
	lb    *lineBuf
	seek  io.Seeker // nil for a compressed file
	size  int64     // -1 for a compressed file
	close func() error
}

// lineReader reads the files of a path (one file, a directory or a glob;
// see fileSet) line by line in name order, streaming each through a
// lineBuf, for the csv and jsonl connectors. It tracks which files are
// finished and the byte offset and line number in the current one, which
// is its checkpointed position. With a monitor interval it polls the path
// for new files on the session clock and never ends (until the session
// ends its inputs).
type lineReader struct {
	t    *Table
	env  Env
	opts fileOpts
	set  fileSet
	name string // the current file's path, for errors
	// listed is the path's files at the last listing, done the finished
	// ones (doneOrder in finishing order, for positions).
	listed    []string
	done      map[string]bool
	doneOrder []string
	cur       *openFile
	line0     int // lines read in cur
	// header, when set, reads the first line of every file (csv header).
	header func(line []byte, n int) error
	// monitoring
	clock    async.Clock
	nextPoll time.Time
	armed    time.Time
	// pacing (option rate): lines read since paceStart
	paceStart time.Time
	paced     int64
	// rest is the pending files' bytes (FileBacklog) as of restFor being
	// the current file and the listing being unchanged (restKnown).
	rest      int64
	restFor   string
	restKnown bool
	// unpublished is the lines read since the last backlog update.
	unpublished int64
	// fields is scratch for the formats' decoders (reused across rows).
	fields []jsonField
}

func newLineReader(t *Table, env Env, bufSize int) (*lineReader, error) {
	o, err := readFileOpts(t, env)
	if err != nil {
		return nil, err
	}
	o.bufSize = bufSize
	set, err := openFileSet(o.path)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", t.Name, err)
	}
	r := &lineReader{t: t, env: env, opts: o, set: set, name: o.path, done: map[string]bool{}, clock: env.Clock}
	if r.clock == nil {
		r.clock = async.RealClock{}
	}
	if r.listed, err = set.list(); err != nil {
		return nil, fmt.Errorf("table %s: %w", t.Name, err)
	}
	if o.monitor > 0 {
		r.nextPoll = r.clock.Now().Add(o.monitor)
	} else if set.kind == 'g' && len(r.listed) == 0 {
		return nil, fmt.Errorf("table %s: path %q matches no files", t.Name, o.path)
	}
	return r, nil
}

// start opens the first file, so that a bad csv header is an error of
// Open, as it was for one file.
func (r *lineReader) start() error {
	if k, ok := r.pending(); ok {
		return r.openAt(k, filePos{})
	}
	return nil
}

// line returns the next line (without "\n", a "\r" before it, or a UTF-8
// byte order mark opening a file; valid until the next call) and its
// number in its file. A line longer than the limit is a bad row.
func (r *lineReader) line() ([]byte, int, lineState, error) {
	for {
		if r.cur == nil {
			if st, err := r.openNext(); st != lineOK || err != nil {
				return nil, 0, st, err
			}
		}
		l, n, long, ok, err := r.readLine()
		if err != nil {
			return nil, 0, lineEnd, err
		}
		if !ok {
			r.finish()
			continue
		}
		r.unpublished++
		if r.line0%backlogEvery == 0 {
			r.publishBacklog()
		}
		if long {
			err := fmt.Errorf("line longer than %d bytes (option %s)", r.opts.maxLine, MaxLineBytesOption)
			if err := r.badRow(n, err); err != nil {
				return nil, 0, lineEnd, err
			}
			continue
		}
		return l, n, lineOK, nil
	}
}

// due paces a format's next (one row per call) at the rate option's rows
// per second of the session clock, as nexmark's rate: a replayed file
// arrives as a stream would.
func (r *lineReader) due() bool {
	if r.opts.rate <= 0 {
		return true
	}
	now := r.clock.Now()
	if r.paceStart.IsZero() {
		r.paceStart = now
	}
	if r.paced < int64(now.Sub(r.paceStart).Seconds()*r.opts.rate)+1 {
		r.paced++
		return true
	}
	return false
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// readLine reads one line of the current file and its number; long
// reports a line past the limit (skipped), !ok the end of the file.
func (r *lineReader) readLine() (l []byte, n int, long, ok bool, err error) {
	lb := r.cur.lb
	at := lb.off
	if l, long, ok, err = lb.next(); err != nil {
		return nil, 0, false, false, fmt.Errorf("%s:%d: read: %w", r.name, r.line0+1, err)
	}
	if !ok {
		return nil, 0, false, false, nil
	}
	r.line0++
	if at == 0 {
		l = bytes.TrimPrefix(l, utf8BOM)
	}
	if n := len(l); n > 0 && l[n-1] == '\r' {
		l = l[:n-1]
	}
	return l, r.line0, long, true, nil
}

// pending returns the first listed file not yet read.
func (r *lineReader) pending() (string, bool) {
	for _, k := range r.listed {
		if !r.done[k] && (r.cur == nil || r.cur.key != k) {
			return k, true
		}
	}
	return "", false
}

// openNext opens the next file; without one, a bounded path is at its end
// and a monitored one lists its path again when the interval is up.
func (r *lineReader) openNext() (lineState, error) {
	k, ok := r.pending()
	if !ok && r.opts.monitor > 0 {
		ending := r.env.EndInput != nil && r.env.EndInput.Load()
		now := r.clock.Now()
		if ending || !now.Before(r.nextPoll) {
			r.nextPoll = now.Add(r.opts.monitor)
			listed, err := r.set.list()
			if err != nil {
				return lineEnd, fmt.Errorf("list %s: %w", r.opts.path, err)
			}
			r.listed, r.restKnown = listed, false
			k, ok = r.pending()
		}
		if !ok && !ending {
			if !r.armed.Equal(r.nextPoll) {
				// a timer at the poll, so a stepped clock advances to it
				r.armed = r.nextPoll
				r.clock.AfterFunc(r.nextPoll.Sub(now), func() {})
			}
			return lineNone, nil
		}
	}
	if !ok {
		r.publishBacklog()
		return lineEnd, nil
	}
	err := r.openAt(k, filePos{})
	r.publishBacklog()
	return lineOK, err
}

// openAt opens the file with key k at position p: it reads the file's
// header (if the format has one) and then seeks to p; a compressed file
// is read and dropped up to p.
func (r *lineReader) openAt(k string, p filePos) error {
	r.closeCur()
	path := r.set.pathOf(k)
	rd, sk, size, closeFn, err := openStream(path)
	if err != nil {
		return fmt.Errorf("open: %w", err)
	}
	r.cur = &openFile{key: k, lb: newLineBuf(rd, r.opts.bufSize, r.opts.maxLine), seek: sk, size: size, close: closeFn}
	r.name, r.line0 = path, 0
	if r.header != nil {
		l, n, long, ok, err := r.readLine()
		if err != nil {
			return err
		}
		if long {
			return fmt.Errorf("%s:%d: header: line longer than %d bytes (option %s)", path, n, r.opts.maxLine, MaxLineBytesOption)
		}
		if ok {
			if err := r.header(l, n); err != nil {
				return err
			}
		}
	}
	return r.skipTo(p)
}

func (r *lineReader) skipTo(p filePos) error {
	lb := r.cur.lb
	if p.off == 0 {
		return nil // the start (after the header)
	}
	if p.off < lb.off {
		return fmt.Errorf("%s: offset %d is inside the header", r.name, p.off)
	}
	if r.cur.size >= 0 && p.off > r.cur.size {
		return fmt.Errorf("%s: offset %d beyond the file (%d bytes)", r.name, p.off, r.cur.size)
	}
	if err := lb.skipTo(p.off, r.cur.seek); err != nil {
		return fmt.Errorf("%s: %w", r.name, err)
	}
	r.line0 = p.line
	return nil
}

// finish closes the current file, marking it read.
func (r *lineReader) finish() {
	k := r.cur.key
	r.closeCur()
	if !r.done[k] {
		r.done[k] = true
		r.doneOrder = append(r.doneOrder, k)
	}
}

func (r *lineReader) closeCur() {
	if r.cur != nil {
		_ = r.cur.close()
		r.cur = nil
	}
}

func (r *lineReader) position() []byte {
	c := fileCheckpoint{done: r.doneOrder}
	if r.cur != nil {
		c.hasCur, c.cur, c.pos = true, r.cur.key, filePos{off: r.cur.lb.off, line: r.line0}
	}
	return c.encode()
}

func (r *lineReader) seek(b []byte) error {
	first := ""
	if len(r.listed) > 0 {
		first = r.listed[0]
	}
	c, err := decodeFileCheckpoint(b, first)
	if err != nil {
		return err
	}
	r.closeCur()
	r.paceStart, r.paced = time.Time{}, 0
	r.done, r.doneOrder = map[string]bool{}, nil
	for _, k := range c.done {
		if !r.done[k] {
			r.done[k] = true
			r.doneOrder = append(r.doneOrder, k)
		}
	}
	if !c.hasCur {
		return nil
	}
	if r.set.kind != 'f' && !slices.Contains(r.listed, c.cur) {
		r.listed = append(r.listed, c.cur)
		slices.Sort(r.listed)
	}
	return r.openAt(c.cur, c.pos)
}

func (r *lineReader) close() error {
	r.closeCur()
	r.env.FileBacklog.closed(r)
	return nil
}
