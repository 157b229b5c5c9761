package objpooltest

import (
	"context"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"clink/state/objpool"
)

// HookStore wraps an ObjectStore and lets a test fail or intercept calls by
// operation and key prefix, and count them.
type HookStore struct {
	objpool.ObjectStore
	mu    sync.Mutex
	hooks []hook
	calls atomic.Int64
}

type hook struct {
	op, prefix string
	fn         func() error
}

// NewHookStore wraps inner.
func NewHookStore(inner objpool.ObjectStore) *HookStore { return &HookStore{ObjectStore: inner} }

// On runs fn before every op ("get", "range", "put-absent", "put-match",
// "delete", "list"; "" for all) on keys starting with prefix; a non-nil error from
// fn is returned instead of calling the store.
func (h *HookStore) On(op, prefix string, fn func() error) {
	h.mu.Lock()
	h.hooks = append(h.hooks, hook{op, prefix, fn})
	h.mu.Unlock()
}

// Clear removes all hooks.
func (h *HookStore) Clear() {
	h.mu.Lock()
	h.hooks = nil
	h.mu.Unlock()
}

// Calls counts calls that reached the wrapper.
func (h *HookStore) Calls() int64 { return h.calls.Load() }

func (h *HookStore) before(op, key string) error {
	h.calls.Add(1)
	h.mu.Lock()
	hooks := append([]hook(nil), h.hooks...)
	h.mu.Unlock()
	for _, k := range hooks {
		if (k.op == "" || k.op == op) && strings.HasPrefix(key, k.prefix) {
			if err := k.fn(); err != nil {
				return err
			}
		}
	}
	return nil
}

// Get forwards unless a hook fails it.
func (h *HookStore) Get(ctx context.Context, key string) ([]byte, string, error) {
	if err := h.before("get", key); err != nil {
		return nil, "", err
	}
	return h.ObjectStore.Get(ctx, key)
}

// GetRange forwards unless a hook fails it.
func (h *HookStore) GetRange(ctx context.Context, key string, off, n int64) ([]byte, int64, error) {
	if err := h.before("range", key); err != nil {
		return nil, 0, err
	}
	return h.ObjectStore.GetRange(ctx, key, off, n)
}

// PutIfAbsent forwards unless a hook fails it.
func (h *HookStore) PutIfAbsent(ctx context.Context, key string, data []byte) (string, error) {
	if err := h.before("put-absent", key); err != nil {
		return "", err
	}
	return h.ObjectStore.PutIfAbsent(ctx, key, data)
}

// PutFileIfAbsent forwards unless a hook fails it (as "put-absent").
func (h *HookStore) PutFileIfAbsent(ctx context.Context, key string, f *os.File, size int64) (string, error) {
	if err := h.before("put-absent", key); err != nil {
		return "", err
	}
	return objpool.PutFile(ctx, h.ObjectStore, key, f, size)
}

// PutIfMatch forwards unless a hook fails it.
func (h *HookStore) PutIfMatch(ctx context.Context, key string, data []byte, etag string) (string, error) {
	if err := h.before("put-match", key); err != nil {
		return "", err
	}
	return h.ObjectStore.PutIfMatch(ctx, key, data, etag)
}

// Delete forwards unless a hook fails it.
func (h *HookStore) Delete(ctx context.Context, key string) error {
	if err := h.before("delete", key); err != nil {
		return err
	}
	return h.ObjectStore.Delete(ctx, key)
}

// List forwards unless a hook fails it (the hook sees the prefix as key).
func (h *HookStore) List(ctx context.Context, prefix string) ([]string, error) {
	if err := h.before("list", prefix); err != nil {
		return nil, err
	}
	return h.ObjectStore.List(ctx, prefix)
}
