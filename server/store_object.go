package server

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"time"

	"clink/state/objpool"
	"clink/state/s3pool"
	"clink/state/stateuri"
)

// objectCatalog is the catalog object's content: the statements and the
// server that last took the catalog over.
type objectCatalog struct {
	Owner   string  `json:"owner"`
	Entries []entry `json:"entries"`
}

// objectHome keeps the catalog in one object (storeFile) under a
// remote-read:// prefix, beside the jobs' checkpoints. Every write is
// conditional on the ETag this server last wrote, and a server takes the
// catalog over by rewriting it at start with itself as owner: a server
// started later on the same prefix (a restart after kill -9, or a second
// one by mistake) wins, and the older one's next statement fails instead
// of undoing the newer one's catalog. (A directory lock plays that part
// on disagg-file://.)
type objectHome struct {
	st    objpool.ObjectStore
	where string // the redacted URI, for messages
	owner string
	etag  string // "" until the object exists
}

// catalogTimeout bounds one catalog read or write, retries included.
const catalogTimeout = 30 * time.Second

// newObjectStore opens the object store of a remote-read:// URI; tests
// replace it with an in-process S3.
var newObjectStore = func(uri string) (objpool.ObjectStore, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return nil, err
	}
	cfg, err := s3pool.ParseURI(u)
	if err != nil {
		return nil, err
	}
	return s3pool.NewStore(cfg)
}

// openObjectHome reads the catalog of a remote-read:// URI and takes it
// over.
func openObjectHome(uri string) (*objectHome, []entry, error) {
	st, err := newObjectStore(uri)
	if err != nil {
		return nil, nil, fmt.Errorf("serve: %w", err)
	}
	host, _ := os.Hostname()
	h := &objectHome{st: st, where: stateuri.Redact(uri),
		owner: fmt.Sprintf("%s pid %d since %s (%s)", host, os.Getpid(), time.Now().UTC().Format(time.RFC3339), rand.Text()[:8])}
	var cat objectCatalog
	err = retryCatalog(func(ctx context.Context) error {
		data, etag, err := st.Get(ctx, storeFile)
		if errors.Is(err, objpool.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := json.Unmarshal(data, &cat); err != nil {
			return &damagedError{err}
		}
		h.etag = etag
		return nil
	})
	if err != nil {
		var d *damagedError
		if errors.As(err, &d) {
			return nil, nil, fmt.Errorf("serve: catalog %s/%s is damaged: %w", h.where, storeFile, d.err)
		}
		return nil, nil, fmt.Errorf("serve: read catalog %s: %w", h.where, err)
	}
	if err := h.write(cat.Entries); err != nil {
		return nil, nil, fmt.Errorf("serve: %w", err)
	}
	return h, cat.Entries, nil
}

type damagedError struct{ err error }

func (e *damagedError) Error() string { return e.err.Error() }

func (h *objectHome) write(entries []entry) error {
	data, err := json.MarshalIndent(objectCatalog{Owner: h.owner, Entries: entries}, "", "  ")
	if err != nil {
		return fmt.Errorf("persist catalog: %w", err)
	}
	err = retryCatalog(func(ctx context.Context) error {
		var etag string
		var err error
		if h.etag == "" {
			etag, err = h.st.PutIfAbsent(ctx, storeFile, data)
		} else {
			etag, err = h.st.PutIfMatch(ctx, storeFile, data, h.etag)
		}
		if err == nil {
			h.etag = etag
		}
		return err
	})
	switch {
	case errors.Is(err, objpool.ErrPrecondition) || (h.etag != "" && errors.Is(err, objpool.ErrNotFound)):
		return fmt.Errorf("persist catalog: another clink serve took over the catalog of %s after this one (%s): stop this server", h.where, h.owner)
	case err != nil:
		return fmt.Errorf("persist catalog %s: %w", h.where, err)
	}
	return nil
}

func (h *objectHome) close() {}

// retryCatalog runs op up to three times within catalogTimeout, backing
// off between attempts; a lost condition, a missing object or a damaged
// catalog is final at once.
func retryCatalog(op func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), catalogTimeout)
	defer cancel()
	var err error
	for attempt, wait := 0, 100*time.Millisecond; attempt < 3; attempt, wait = attempt+1, wait*2 {
		var d *damagedError
		if err = op(ctx); err == nil || errors.Is(err, objpool.ErrPrecondition) || errors.Is(err, objpool.ErrNotFound) || errors.As(err, &d) {
			return err
		}
		select {
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		case <-time.After(wait):
		}
	}
	return err
}

// freeObjects deletes the objects of a job's checkpoints (name/...) under
// a remote-read:// prefix.
func freeObjects(uri, name string) error {
	st, err := newObjectStore(uri)
	if err != nil {
		return fmt.Errorf("free state %s: %w", name, err)
	}
	return retryCatalog(func(ctx context.Context) error {
		keys, err := st.List(ctx, name+"/")
		if err != nil {
			return fmt.Errorf("free state %s: %w", name, err)
		}
		for _, k := range keys {
			if err := st.Delete(ctx, k); err != nil {
				return fmt.Errorf("free state %s: %w", name, err)
			}
		}
		return nil
	})
}
