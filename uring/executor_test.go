//go:build linux

package uring

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"clink/engine/async"
)

func TestExecutor(t *testing.T) {
	e, err := NewExecutor(nil, 2)
	if errors.Is(err, ErrUnsupported) {
		t.Skipf("io_uring refused by this kernel: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "blob")
	if err := os.WriteFile(path, []byte("0123456789"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	tests := []struct {
		off  int64
		size int
		want string
	}{
		{0, 4, "0123"},
		{6, 10, "6789"},
		{10, 4, ""},
	}
	var wg sync.WaitGroup
	for _, tc := range tests {
		wg.Add(1)
		buf := make([]byte, tc.size)
		err := e.SubmitRead(int(f.Fd()), buf, tc.off, func(n int, err error) {
			defer wg.Done()
			if err != nil || string(buf[:n]) != tc.want {
				t.Errorf("read at %d: %q, %v; want %q", tc.off, buf[:n], err, tc.want)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	wg.Add(1)
	if err := e.SubmitBlocking(wg.Done); err != nil {
		t.Fatal(err)
	}
	wg.Wait()

	var bad sync.WaitGroup
	bad.Add(1)
	if err := e.SubmitRead(-1, make([]byte, 1), 0, func(_ int, err error) {
		defer bad.Done()
		if !errors.Is(err, unix.EBADF) {
			t.Errorf("read of a bad fd: %v", err)
		}
	}); err != nil {
		t.Fatal(err)
	}
	bad.Wait()

	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.SubmitRead(int(f.Fd()), make([]byte, 1), 0, func(int, error) {}); !errors.Is(err, async.ErrClosed) {
		t.Fatalf("read after close: %v", err)
	}
	if err := e.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
}

func TestExecutorOrPool(t *testing.T) {
	ex, err := NewExecutorOrPool(1, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()
	if Probe() == nil {
		if _, ok := ex.(*Executor); !ok {
			t.Fatalf("ring available but got %T", ex)
		}
	}
}

func TestSetupErrorClassification(t *testing.T) {
	tests := []struct {
		errno       unix.Errno
		unsupported bool
	}{
		{unix.ENOSYS, true},
		{unix.EPERM, true},
		{unix.EACCES, true},
		{unix.ENOMEM, false},
		{unix.EINVAL, false},
	}
	for _, tc := range tests {
		err := error(&SetupError{Errno: tc.errno})
		if got := errors.Is(err, ErrUnsupported); got != tc.unsupported {
			t.Errorf("%v: unsupported = %v, want %v", tc.errno, got, tc.unsupported)
		}
		if !errors.Is(err, tc.errno) {
			t.Errorf("%v: errno not matched", tc.errno)
		}
	}
	if _, err := NewRing(0); err == nil {
		t.Error("zero entries accepted")
	}
}
