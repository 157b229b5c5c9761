// Package filepool is the local-directory remote pool (disagg-file://DIR):
// objpool's layout and fenced commit protocol over files, so one machine
// gets durable checkpoints without S3. Every object is written to a temp
// file, fsync'd, then published atomically (link for create-if-absent,
// rename under an flock for compare-and-swap), and the directory fsync'd.
package filepool

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"clink/state/objpool"
)

const lockName = ".lock"

// Store is an objpool.ObjectStore in a directory. Object keys are relative
// paths; the ETag of an object is a hash of its bytes.
type Store struct {
	dir   string
	files openFiles // open run files, reused by ranged reads
}

var (
	_ objpool.ObjectStore = (*Store)(nil)
	_ objpool.FilePutter  = (*Store)(nil)
)

// NewStore opens the directory dir. Nothing is created before the first
// write, so probing or restoring a read-only copy needs no write access
// (a directory that does not exist holds nothing).
func NewStore(dir string) (*Store, error) {
	if dir == "" {
		return nil, errors.New("filepool: empty directory")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("filepool: %s: %w", dir, err)
	}
	if fi, err := os.Stat(abs); err == nil && !fi.IsDir() {
		return nil, fmt.Errorf("filepool: %s is not a directory", abs)
	}
	return &Store{dir: abs}, nil
}

// String names the directory.
func (s *Store) String() string { return "disagg-file://" + s.dir }

func (s *Store) path(key string) (string, error) {
	if key == "" || strings.HasPrefix(key, "/") || strings.Contains(key, "..") || strings.HasPrefix(filepath.Base(key), ".") {
		return "", fmt.Errorf("filepool: invalid object key %q", key)
	}
	return filepath.Join(s.dir, filepath.FromSlash(key)), nil
}

// classify maps file errors to objpool's classes.
func classify(err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: %v", objpool.ErrNotFound, err)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%w: %v", objpool.ErrAccessDenied, err)
	}
	return err
}

// Get reads a whole object.
func (s *Store) Get(ctx context.Context, key string) ([]byte, string, error) {
	p, err := s.path(key)
	if err != nil {
		return nil, "", err
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, "", fmt.Errorf("%s: get %s: %w", s, key, classify(err))
	}
	return b, objpool.ContentETag(b), nil
}

// GetRange reads length bytes at off, and the file's size.
func (s *Store) GetRange(ctx context.Context, key string, off, length int64) ([]byte, int64, error) {
	p, err := s.path(key)
	if err != nil {
		return nil, 0, err
	}
	var f *os.File
	if immutable(key) {
		of, err := s.files.acquire(key, p)
		if err != nil {
			return nil, 0, fmt.Errorf("%s: get %s: %w", s, key, classify(err))
		}
		defer s.files.release(of)
		f = of.f
	} else {
		if f, err = os.Open(p); err != nil {
			return nil, 0, fmt.Errorf("%s: get %s: %w", s, key, classify(err))
		}
		defer f.Close()
	}
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, fmt.Errorf("%s: get %s: %w", s, key, classify(err))
	}
	size := fi.Size()
	b := make([]byte, length)
	if _, err := f.ReadAt(b, off); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, size, fmt.Errorf("%s: get %s [%d,+%d) of %d bytes: %w", s, key, off, length, size, objpool.ErrShort)
		}
		return nil, size, fmt.Errorf("%s: get %s [%d,+%d): %w", s, key, off, length, err)
	}
	return b, size, nil
}

// writeTemp writes data to a fresh fsync'd temp file next to p.
func writeTemp(p string, data io.Reader) (string, error) {
	dir := filepath.Dir(p)
	if err := mkdirDurable(dir); err != nil {
		return "", err
	}
	var r [8]byte
	_, _ = rand.Read(r[:])
	tmp := filepath.Join(dir, ".tmp-"+hex.EncodeToString(r[:]))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", classify(err)
	}
	_, werr := io.Copy(f, data)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(tmp)
		return "", werr
	}
	return tmp, nil
}

// mkdirDurable creates dir (and parents) and fsyncs each new entry's parent.
func mkdirDurable(dir string) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	if err := mkdirDurable(filepath.Dir(dir)); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return classify(err)
	}
	return syncDir(filepath.Dir(dir))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// PutIfAbsent publishes data with link(2), which fails if key exists.
func (s *Store) PutIfAbsent(ctx context.Context, key string, data []byte) (string, error) {
	if err := s.putReader(key, bytes.NewReader(data)); err != nil {
		return "", err
	}
	return objpool.ContentETag(data), nil
}

// PutFileIfAbsent publishes the first size bytes of f as PutIfAbsent does,
// copying them through a temp file (objpool.FilePutter), so a compaction's
// output run is never in memory.
func (s *Store) PutFileIfAbsent(ctx context.Context, key string, f *os.File, size int64) (string, error) {
	if err := s.putReader(key, io.NewSectionReader(f, 0, size)); err != nil {
		return "", err
	}
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, size)); err != nil {
		return "", fmt.Errorf("%s: put %s: hash %s: %w", s, key, f.Name(), err)
	}
	return objpool.HashETag(h), nil
}

// putReader publishes what r holds under key with link(2), which fails if
// key exists.
func (s *Store) putReader(key string, r io.Reader) error {
	p, err := s.path(key)
	if err != nil {
		return err
	}
	tmp, err := writeTemp(p, r)
	if err != nil {
		return fmt.Errorf("%s: put %s: %w", s, key, err)
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, p); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s: put %s if absent: %w", s, key, objpool.ErrPrecondition)
		}
		return fmt.Errorf("%s: put %s: %w", s, key, classify(err))
	}
	if err := syncDir(filepath.Dir(p)); err != nil {
		return fmt.Errorf("%s: put %s: sync dir: %w", s, key, err)
	}
	return nil
}

// PutIfMatch replaces key under the directory's flock if its content hash
// is still etag, by rename over it.
func (s *Store) PutIfMatch(ctx context.Context, key string, data []byte, etag string) (string, error) {
	p, err := s.path(key)
	if err != nil {
		return "", err
	}
	unlock, err := s.lock()
	if err != nil {
		return "", err
	}
	defer unlock()
	old, err := os.ReadFile(p)
	if err != nil {
		return "", fmt.Errorf("%s: put %s if match: %w", s, key, classify(err))
	}
	if objpool.ContentETag(old) != etag {
		return "", fmt.Errorf("%s: put %s if match %s: %w", s, key, etag, objpool.ErrPrecondition)
	}
	tmp, err := writeTemp(p, bytes.NewReader(data))
	if err != nil {
		return "", fmt.Errorf("%s: put %s: %w", s, key, err)
	}
	if err := os.Rename(tmp, p); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("%s: put %s: %w", s, key, classify(err))
	}
	if err := syncDir(filepath.Dir(p)); err != nil {
		return "", fmt.Errorf("%s: put %s: sync dir: %w", s, key, err)
	}
	return objpool.ContentETag(data), nil
}

// lock takes the directory's exclusive flock, which serialises
// compare-and-swap across processes.
func (s *Store) lock() (func(), error) {
	if err := mkdirDurable(s.dir); err != nil {
		return nil, fmt.Errorf("%s: create: %w", s, err)
	}
	f, err := os.OpenFile(filepath.Join(s.dir, lockName), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%s: open lock: %w", s, classify(err))
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: flock: %w", s, err)
	}
	return func() {
		_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
		f.Close()
	}, nil
}

// Close closes the files the store keeps open for reads. The store stays
// usable: later reads open their file each time.
func (s *Store) Close() error {
	s.files.closeAll()
	return nil
}

// Delete removes key; an absent key is fine.
func (s *Store) Delete(ctx context.Context, key string) error {
	p, err := s.path(key)
	if err != nil {
		return err
	}
	s.files.drop(key)
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: delete %s: %w", s, key, classify(err))
	}
	return nil
}

// List walks the directory for the keys starting with prefix (slash
// separated, relative to the directory), skipping hidden files (the lock,
// temp files of writes in flight).
func (s *Store) List(ctx context.Context, prefix string) ([]string, error) {
	root := s.dir
	if i := strings.LastIndex(prefix, "/"); i >= 0 {
		root = filepath.Join(s.dir, filepath.FromSlash(prefix[:i]))
	}
	var keys []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if strings.HasPrefix(d.Name(), ".") || d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(s.dir, p)
		if err != nil {
			return err
		}
		if key := filepath.ToSlash(rel); strings.HasPrefix(key, prefix) {
			keys = append(keys, key)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: list %s: %w", s, prefix, classify(err))
	}
	return keys, nil
}
