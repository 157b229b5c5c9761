package objpool

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"sort"
	"strings"
	"sync"
)

// MemStore is an in-memory ObjectStore with S3's conditional-write
// semantics. It is not durable; it exists for tests and simulations.
type MemStore struct {
	mu   sync.Mutex
	objs map[string][]byte
}

// NewMemStore returns an empty store.
func NewMemStore() *MemStore { return &MemStore{objs: map[string][]byte{}} }

// ContentETag is the ETag MemStore and filepool give an object: a hash of
// its bytes, so a compare-and-swap needs no extra metadata.
func ContentETag(data []byte) string {
	h := sha256.New()
	h.Write(data)
	return HashETag(h)
}

// HashETag is ContentETag of the bytes written to h, a SHA-256 hash, for
// stores that hash an object as they stream it.
func HashETag(h hash.Hash) string {
	return `"` + hex.EncodeToString(h.Sum(nil)[:16]) + `"`
}

// Get returns a copy of the object.
func (m *MemStore) Get(ctx context.Context, key string) ([]byte, string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.objs[key]
	if !ok {
		return nil, "", fmt.Errorf("get %s: %w", key, ErrNotFound)
	}
	return append([]byte(nil), b...), ContentETag(b), nil
}

// GetRange returns a copy of the requested byte range and the object's
// size.
func (m *MemStore) GetRange(ctx context.Context, key string, off, length int64) ([]byte, int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.objs[key]
	if !ok {
		return nil, 0, fmt.Errorf("get %s: %w", key, ErrNotFound)
	}
	size := int64(len(b))
	if off < 0 || length < 0 || off+length > size {
		return nil, size, fmt.Errorf("get %s: range [%d,+%d) outside %d bytes: %w", key, off, length, size, ErrShort)
	}
	return append([]byte(nil), b[off:off+length]...), size, nil
}

// PutIfAbsent creates key unless it exists.
func (m *MemStore) PutIfAbsent(ctx context.Context, key string, data []byte) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.objs[key]; ok {
		return "", fmt.Errorf("put %s if absent: %w", key, ErrPrecondition)
	}
	m.objs[key] = append([]byte(nil), data...)
	return ContentETag(data), nil
}

// PutIfMatch replaces key if its ETag is etag.
func (m *MemStore) PutIfMatch(ctx context.Context, key string, data []byte, etag string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	old, ok := m.objs[key]
	if !ok {
		return "", fmt.Errorf("put %s if match: %w", key, ErrNotFound)
	}
	if ContentETag(old) != etag {
		return "", fmt.Errorf("put %s if match %s: %w", key, etag, ErrPrecondition)
	}
	m.objs[key] = append([]byte(nil), data...)
	return ContentETag(data), nil
}

// Delete removes key.
func (m *MemStore) Delete(ctx context.Context, key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.objs, key)
	return nil
}

// List returns the keys starting with prefix, sorted.
func (m *MemStore) List(ctx context.Context, prefix string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for k := range m.objs {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out, nil
}

// Keys returns the number of objects stored (for tests).
func (m *MemStore) Keys() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.objs)
}

// String names the store.
func (m *MemStore) String() string { return "mem://" }
