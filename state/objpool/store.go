// Package objpool implements state.RemotePool once, over a tiny ObjectStore
// interface, so every durable backend (S3, a local directory) shares one
// object layout and one fenced commit protocol. See docs/object-layout.md.
package objpool

import (
	"context"
	"errors"
	"fmt"
	"os"
)

// ObjectStore is the little an object store must offer: whole and ranged
// reads by key, and conditional writes. Keys are relative to the store's
// root (an S3 bucket and prefix, a directory). It must be safe for
// concurrent use.
type ObjectStore interface {
	// Get returns the object's bytes and its ETag, or an error wrapping
	// ErrNotFound.
	Get(ctx context.Context, key string) (data []byte, etag string, err error)
	// GetRange returns length bytes at offset off of the object and the
	// object's whole size (-1 when the store cannot tell), so a reader can
	// see that an object was cut short or extended. A range past the
	// object's end fails with an error wrapping ErrShort.
	GetRange(ctx context.Context, key string, off, length int64) (data []byte, size int64, err error)
	// PutIfAbsent creates key (If-None-Match: *); it fails with an error
	// wrapping ErrPrecondition when the key exists.
	PutIfAbsent(ctx context.Context, key string, data []byte) (etag string, err error)
	// PutIfMatch replaces key only if its current ETag is etag (If-Match); it
	// fails with ErrPrecondition otherwise, or ErrNotFound if key is absent.
	PutIfMatch(ctx context.Context, key string, data []byte, etag string) (newEtag string, err error)
	// Delete removes key; deleting an absent key is not an error.
	Delete(ctx context.Context, key string) error
	// List returns the keys that start with prefix, in any order. Only
	// garbage collection lists (to find objects no manifest names, such as
	// a torn commit's); reads and restores never do.
	List(ctx context.Context, prefix string) ([]string, error)
	// String names the store for error messages (bucket, prefix, endpoint;
	// never secrets).
	String() string
}

// Error classes a store wraps its errors in, so the pool can decide what to
// retry and what to report.
var (
	// ErrNotFound: no object under the key.
	ErrNotFound = errors.New("object not found")
	// ErrShort: a ranged read reaches past the object's end.
	ErrShort = errors.New("object shorter than the range read")
	// ErrPrecondition: a conditional write lost (412 Precondition Failed).
	ErrPrecondition = errors.New("precondition failed")
	// ErrTransient: throttling (503 SlowDown), a 5xx or a dropped
	// connection; worth retrying with backoff.
	ErrTransient = errors.New("transient object store error")
	// ErrAccessDenied: the credentials lack permission on the bucket/prefix.
	ErrAccessDenied = errors.New("access denied")
	// ErrNoBucket: the bucket (or directory) does not exist.
	ErrNoBucket = errors.New("no such bucket")
	// ErrBadCredentials: unknown access key, bad signature or expired token.
	ErrBadCredentials = errors.New("invalid credentials")
	// ErrCircuitOpen: the breaker is open after repeated failures; calls
	// fail fast until its cool-down ends.
	ErrCircuitOpen = errors.New("object store circuit breaker open")
)

// FilePutter is an ObjectStore that can create an object from a local file
// without reading it into memory. A pool whose store offers it writes the
// runs compaction merges to a spool file first (Config.SpoolDir), so a
// partition's base run, which grows with the state, is never held whole
// in memory (docs/object-layout.md "Compaction").
type FilePutter interface {
	// PutFileIfAbsent creates key from the first size bytes of f, as
	// PutIfAbsent does. It may read f from any offset, and again on a
	// retry; it leaves f open.
	PutFileIfAbsent(ctx context.Context, key string, f *os.File, size int64) (etag string, err error)
}

// PutFile creates key from the first size bytes of f on s: streamed where
// s is a FilePutter, read into memory otherwise (test wrappers).
func PutFile(ctx context.Context, s ObjectStore, key string, f *os.File, size int64) (string, error) {
	if fp, ok := s.(FilePutter); ok {
		return fp.PutFileIfAbsent(ctx, key, f, size)
	}
	data := make([]byte, size)
	if _, err := f.ReadAt(data, 0); err != nil {
		return "", fmt.Errorf("read spool %s: %w", f.Name(), err)
	}
	return s.PutIfAbsent(ctx, key, data)
}
