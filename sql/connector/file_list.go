package connector

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// fileSet is what a file source's path names: one file, every regular
// file of a directory, or the regular files a glob matches. Files are
// known by a key relative to the set's root (the file's name in a
// directory, its path below the pattern's fixed prefix for a glob, "" for
// a single file), so a checkpoint survives the script moving elsewhere.
type fileSet struct {
	kind byte // 'f' one file, 'd' a directory, 'g' a glob
	path string
	root string
}

// hasMeta reports whether a path holds glob metacharacters.
func hasMeta(p string) bool { return strings.ContainsAny(p, `*?[\`) }

func openFileSet(path string) (fileSet, error) {
	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.IsDir():
		return fileSet{kind: 'd', path: path, root: path}, nil
	case err == nil:
		return fileSet{kind: 'f', path: path}, nil
	case hasMeta(path):
		if _, err := filepath.Match(path, ""); err != nil {
			return fileSet{}, fmt.Errorf("glob %q: %w", path, err)
		}
		return fileSet{kind: 'g', path: path, root: globRoot(path)}, nil
	}
	return fileSet{}, err
}

// globRoot is the leading directories of a pattern that hold no
// metacharacters.
func globRoot(pattern string) string {
	dir := filepath.Dir(pattern)
	for hasMeta(dir) {
		dir = filepath.Dir(dir)
	}
	return dir
}

// list returns the set's file keys in name order.
func (s fileSet) list() ([]string, error) {
	switch s.kind {
	case 'f':
		return []string{""}, nil
	case 'd':
		ents, err := os.ReadDir(s.path)
		if err != nil {
			return nil, err
		}
		var keys []string
		for _, e := range ents {
			// hidden files and Flink's in-progress '_' files are skipped
			if n := e.Name(); !strings.HasPrefix(n, ".") && !strings.HasPrefix(n, "_") && regular(filepath.Join(s.path, n)) {
				keys = append(keys, n)
			}
		}
		return keys, nil
	}
	matches, err := filepath.Glob(s.path)
	if err != nil {
		return nil, fmt.Errorf("glob %q: %w", s.path, err)
	}
	var keys []string
	for _, m := range matches {
		if !regular(m) {
			continue
		}
		k, err := filepath.Rel(s.root, m)
		if err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys, nil
}

// regular reports whether p is (or links to) a regular file.
func regular(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// pathOf returns the path of the file with key k.
func (s fileSet) pathOf(k string) string {
	if s.kind == 'f' {
		return s.path
	}
	return filepath.Join(s.root, k)
}

// openStream opens a file for reading, decompressing .gz and .zst files.
// It returns the stream, a seeker when the stream is the file itself (so
// a restore can seek instead of re-reading), the file's size, and a close
// function for everything opened.
func openStream(path string) (io.Reader, io.Seeker, int64, func() error, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, 0, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, nil, 0, nil, err
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".gz":
		zr, err := gzip.NewReader(f)
		if err != nil {
			_ = f.Close()
			return nil, nil, 0, nil, fmt.Errorf("%s: gzip: %w", path, err)
		}
		return zr, nil, -1, func() error { _ = zr.Close(); return f.Close() }, nil
	case ".zst":
		zr, err := zstd.NewReader(f, zstd.WithDecoderConcurrency(1))
		if err != nil {
			_ = f.Close()
			return nil, nil, 0, nil, fmt.Errorf("%s: zstd: %w", path, err)
		}
		return zr, nil, -1, func() error { zr.Close(); return f.Close() }, nil
	}
	return f, f, fi.Size(), f.Close, nil
}
