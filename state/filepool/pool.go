package filepool

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"clink/state"
	"clink/state/objpool"
)

// Scheme is the state URI scheme this package serves.
const Scheme = "disagg-file"

// Pool is a state.RemotePool in a local directory.
type Pool struct {
	*objpool.Pool
	store *Store
}

// New opens a pool in dir (created if missing). cfg.Store is set by New.
func New(dir string, cfg objpool.Config) (*Pool, error) {
	st, err := NewStore(dir)
	if err != nil {
		return nil, err
	}
	cfg.Store = st
	if cfg.SpoolDir == "" {
		cfg.SpoolDir = dir // beside the runs it becomes, not in a tmpfs /tmp
	}
	p, err := objpool.New(cfg)
	if err != nil {
		return nil, err
	}
	// A damaged CURRENT opens: restore by id still works (objpool
	// headless.go), and Latest reports the damage.
	if _, err := p.Latest(context.Background()); err != nil && !errors.Is(err, state.ErrCorrupt) {
		return nil, fmt.Errorf("filepool: open: %w", err)
	}
	return &Pool{Pool: p, store: st}, nil
}

// Close closes the pool and the run files its store keeps open.
func (p *Pool) Close() error {
	err := p.Pool.Close()
	p.store.Close()
	return err
}

// DirOf returns the directory a disagg-file:// URI names: an absolute path
// (disagg-file:///var/lib/clink) or a relative one (disagg-file://data).
func DirOf(u *url.URL) (string, error) {
	if u.Scheme != Scheme {
		return "", fmt.Errorf("filepool: scheme %q, want %s://DIR", u.Scheme, Scheme)
	}
	dir := u.Host + u.Path
	if dir == "" {
		return "", fmt.Errorf("filepool: %s:// needs a directory, e.g. %s:///var/lib/clink/state", Scheme, Scheme)
	}
	return dir, nil
}

// Open builds a pool from a disagg-file:// URI (the state URI factory's
// hook). retain=N (default objpool.DefaultRetain, or all) sets how many
// checkpoints stay restorable; other query parameters belong to the
// backend and are ignored here.
func Open(u *url.URL) (state.RemotePool, error) {
	dir, err := DirOf(u)
	if err != nil {
		return nil, err
	}
	retain, err := objpool.RetainOf(u.Query())
	if err != nil {
		return nil, fmt.Errorf("filepool: %w", err)
	}
	return New(dir, objpool.Config{Retain: retain})
}
