package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"clink/state/stateuri"
)

// Catalog entry kinds.
const (
	entryDDL    = "ddl"    // CREATE TABLE / VIEW, DROP, SET: replayed in order
	entryMV     = "mv"     // CREATE MATERIALIZED VIEW: a job restored from its checkpoint
	entryInsert = "insert" // INSERT INTO ... SELECT: a job restored from its checkpoint
)

// entry is one persisted catalog statement.
type entry struct {
	Kind string `json:"kind"`
	SQL  string `json:"sql"`
	Job  int    `json:"job,omitempty"`
	// Name is a view's checkpoint name (mv-NAME-FINGERPRINT).
	Name string `json:"name,omitempty"`
}

// storeFile is the catalog's file under a disagg-file:// directory.
const storeFile = "serve-catalog.json"

// store holds the server's catalog, a list of statements, and persists it
// on every change through its home: a file in a disagg-file:// directory
// or an object beside a remote-read:// prefix's checkpoints. A nil store
// persists nothing (memory:// state).
type store struct {
	mu      sync.Mutex
	entries []entry
	home    catalogHome
}

// catalogHome is where a catalog lives: it rewrites the whole list and
// frees what it holds (a directory lock) when the server stops.
type catalogHome interface {
	write(entries []entry) error
	close()
}

// fileHome is the catalog file, rewritten atomically (temp file, fsync,
// rename), in a directory flock'd for the server's life.
type fileHome struct {
	path string
	lock *os.File // one server per directory
}

// openStore opens the catalog of a state URI: a file in a disagg-file://
// directory, an object under a remote-read:// prefix, nothing for the
// in-process schemes.
func openStore(uri string) (*store, error) {
	cfg, _, err := stateuri.Parse(uri)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	switch cfg.Scheme {
	case stateuri.DisaggFile:
		return openFileStore(cfg.Dir)
	case stateuri.RemoteRead:
		home, entries, err := openObjectHome(uri)
		if err != nil {
			return nil, err
		}
		return &store{home: home, entries: entries}, nil
	}
	return nil, nil
}

func openFileStore(dir string) (*store, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("serve: state directory: %w", err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	h := &fileHome{path: filepath.Join(dir, storeFile), lock: lock}
	s := &store{home: h}
	data, err := os.ReadFile(h.path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return s, nil
	case err != nil:
		h.close()
		return nil, fmt.Errorf("serve: read catalog: %w", err)
	}
	if err := json.Unmarshal(data, &s.entries); err != nil {
		h.close()
		return nil, fmt.Errorf("serve: catalog %s is damaged: %w", h.path, err)
	}
	return s, nil
}

// lockFile is the file a server holds a lock on in its state directory.
const lockFile = "serve.lock"

// lockDir takes an exclusive lock on the state directory, so a second
// server on it is refused instead of fencing the first one's jobs; the
// kernel drops the lock when the process dies, even by kill -9.
func lockDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, lockFile), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("serve: lock state directory: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("serve: state directory %s is in use by another clink serve (%v)", dir, err)
	}
	return f, nil
}

// close releases what the catalog's home holds.
func (s *store) close() {
	if s != nil {
		s.home.close()
	}
}

func (h *fileHome) close() {
	if h.lock != nil {
		h.lock.Close()
		h.lock = nil
	}
}

// list returns the entries in order.
func (s *store) list() []entry {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]entry(nil), s.entries...)
}

// add appends an entry and persists the catalog.
func (s *store) add(e entry) error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.entries = append(s.entries, e)
	if err := s.home.write(s.entries); err != nil {
		s.entries = s.entries[:len(s.entries)-1]
		return err
	}
	return nil
}

// remove drops job id's entry and persists the catalog.
func (s *store) remove(id int) error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	kept := make([]entry, 0, len(s.entries))
	for _, e := range s.entries {
		if e.Job != id || e.Kind == entryDDL {
			kept = append(kept, e)
		}
	}
	old := s.entries
	s.entries = kept
	if err := s.home.write(s.entries); err != nil {
		s.entries = old
		return err
	}
	return nil
}

func (h *fileHome) write(entries []entry) error {
	data, err := json.MarshalIndent(entries, "", "  ")
	if err != nil {
		return fmt.Errorf("persist catalog: %w", err)
	}
	tmp := h.path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("persist catalog: %w", err)
	}
	_, werr := f.Write(append(data, '\n'))
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		return fmt.Errorf("persist catalog: %w", err)
	}
	if err := os.Rename(tmp, h.path); err != nil {
		return fmt.Errorf("persist catalog: %w", err)
	}
	if d, err := os.Open(filepath.Dir(h.path)); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}

// freeState deletes a job's checkpoints (DROP MATERIALIZED VIEW, CANCEL
// JOB) on a durable state URI; the in-process schemes free theirs with the
// job.
func freeState(uri, name string) error {
	cfg, _, err := stateuri.Parse(uri)
	if err != nil || name == "" || (cfg.Scheme != stateuri.DisaggFile && cfg.Scheme != stateuri.RemoteRead) {
		return err
	}
	if strings.ContainsAny(name, `/\`) || name == "." || name == ".." {
		return fmt.Errorf("free state: bad checkpoint name %q", name)
	}
	if cfg.Scheme == stateuri.RemoteRead {
		return freeObjects(uri, name)
	}
	if err := os.RemoveAll(filepath.Join(cfg.Dir, name)); err != nil {
		return fmt.Errorf("free state %s: %w", name, err)
	}
	return nil
}
