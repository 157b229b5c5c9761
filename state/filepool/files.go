package filepool

import (
	"container/list"
	"os"
	"strings"
	"sync"
)

// maxOpenFiles bounds the read-only files a Store keeps open.
const maxOpenFiles = 256

// immutable reports whether key names an object that never changes once
// published (runs; CURRENT is replaced, manifests and hot keys are read
// once), so an open file of it may be reused for later reads.
func immutable(key string) bool { return strings.HasPrefix(key, "runs/") }

// openFiles keeps the most recently read run files open, so a ranged read
// of a block is one pread instead of open, pread and close. A file
// deleted (garbage-collected) while open stays readable until closed, and
// its object never reappears under the same key (keys are unique per
// writer attempt), so a cached file never serves stale bytes.
type openFiles struct {
	mu     sync.Mutex
	m      map[string]*openFile
	ll     list.List // of *openFile, most recently used first
	closed bool
}

type openFile struct {
	key     string
	f       *os.File
	refs    int  // reads in progress
	dropped bool // out of the cache: close when refs reaches 0
	elem    *list.Element
}

// acquire returns the open file of key at path, opening it if needed. The
// caller releases it after reading.
func (o *openFiles) acquire(key, path string) (*openFile, error) {
	o.mu.Lock()
	if of, ok := o.m[key]; ok && !o.closed {
		of.refs++
		o.ll.MoveToFront(of.elem)
		o.mu.Unlock()
		return of, nil
	}
	o.mu.Unlock()
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if of, ok := o.m[key]; ok && !o.closed {
		// Opened meanwhile by another reader: use that one.
		f.Close()
		of.refs++
		o.ll.MoveToFront(of.elem)
		return of, nil
	}
	of := &openFile{key: key, f: f, refs: 1}
	if o.closed {
		of.dropped = true // read once, then closed
		return of, nil
	}
	if o.m == nil {
		o.m = map[string]*openFile{}
	}
	o.m[key] = of
	of.elem = o.ll.PushFront(of)
	for o.ll.Len() > maxOpenFiles {
		o.dropLocked(o.ll.Back().Value.(*openFile))
	}
	return of, nil
}

// release ends a read of of.
func (o *openFiles) release(of *openFile) {
	o.mu.Lock()
	defer o.mu.Unlock()
	of.refs--
	if of.dropped && of.refs == 0 {
		of.f.Close()
	}
}

// drop forgets key's open file (its object is being deleted).
func (o *openFiles) drop(key string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if of, ok := o.m[key]; ok {
		o.dropLocked(of)
	}
}

func (o *openFiles) dropLocked(of *openFile) {
	delete(o.m, of.key)
	o.ll.Remove(of.elem)
	of.dropped = true
	if of.refs == 0 {
		of.f.Close()
	}
}

// closeAll closes every cached file (reads in progress close theirs when
// done); later reads open and close their file each time.
func (o *openFiles) closeAll() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.closed = true
	for _, of := range o.m {
		o.dropLocked(of)
	}
}

// open returns the number of files the cache holds open, for tests.
func (o *openFiles) open() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.m)
}
