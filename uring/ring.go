//go:build linux

package uring

import (
	"errors"
	"fmt"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ErrUnsupported is matched (errors.Is) by the error New and NewRing return
// when the kernel refuses io_uring: ENOSYS (not built in), EPERM or EACCES
// (kernel.io_uring_disabled, seccomp, a container profile).
var ErrUnsupported = errors.New("uring: io_uring refused by the kernel")

// SetupError is io_uring_setup's failure. Unsupported reports whether the
// kernel refused io_uring as such, in which case callers fall back to Go's
// own I/O.
type SetupError struct {
	Errno unix.Errno
}

// Error says why setup failed and, when refused, what usually refuses it.
func (e *SetupError) Error() string {
	if e.Unsupported() {
		return fmt.Sprintf("uring: io_uring_setup: %v (io_uring disabled by kernel.io_uring_disabled, seccomp or an old kernel)", e.Errno)
	}
	return fmt.Sprintf("uring: io_uring_setup: %v", e.Errno)
}

// Unsupported reports whether the errno means "io_uring is refused here".
func (e *SetupError) Unsupported() bool {
	return e.Errno == unix.ENOSYS || e.Errno == unix.EPERM || e.Errno == unix.EACCES
}

// Is lets errors.Is(err, ErrUnsupported) and errors.Is(err, unix.EPERM) work.
func (e *SetupError) Is(target error) bool {
	if target == ErrUnsupported {
		return e.Unsupported()
	}
	return target == e.Errno
}

// Ring is one io_uring instance: the mapped SQ ring, CQ ring and SQE array.
// It is not safe for concurrent use; the Reactor serialises access.
type Ring struct {
	fd     int
	params Params

	sqMem, cqMem, sqeMem []byte

	sqHead, sqTail, sqFlags, sqDropped *uint32
	sqMask, sqEntries                  uint32
	sqes                               []SQE
	sqeTail                            uint32 // local tail: SQEs handed out, not yet published

	cqHead, cqTail, cqOverflow *uint32
	cqMask, cqEntries          uint32
	cqes                       []CQE
}

// NewRing sets up a ring with at least entries submission slots (rounded up
// to a power of two by the kernel) and maps it.
func NewRing(entries uint32) (*Ring, error) {
	if entries == 0 {
		return nil, errors.New("uring: ring entries must be positive")
	}
	r := &Ring{}
	r.params.Flags = SetupClamp
	fd, err := sysSetup(entries, &r.params)
	if err != nil {
		var errno unix.Errno
		if errors.As(err, &errno) {
			return nil, &SetupError{Errno: errno}
		}
		return nil, fmt.Errorf("uring: io_uring_setup: %w", err)
	}
	r.fd = fd
	if err := r.mmap(); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

func (r *Ring) mmap() error {
	p := &r.params
	sqSize := int(p.sqOff.Array + p.SQEntries*4)
	cqSize := int(p.cqOff.CQEs + p.CQEntries*uint32(unsafe.Sizeof(CQE{})))
	single := p.Features&FeatSingleMmap != 0
	if single {
		sqSize = max(sqSize, cqSize)
	}
	prot, flags := unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE
	var err error
	if r.sqMem, err = unix.Mmap(r.fd, offSQRing, sqSize, prot, flags); err != nil {
		return fmt.Errorf("uring: mmap SQ ring: %w", err)
	}
	if single {
		r.cqMem = r.sqMem
	} else if r.cqMem, err = unix.Mmap(r.fd, offCQRing, cqSize, prot, flags); err != nil {
		return fmt.Errorf("uring: mmap CQ ring: %w", err)
	}
	sqeSize := int(p.SQEntries) * int(unsafe.Sizeof(SQE{}))
	if r.sqeMem, err = unix.Mmap(r.fd, offSQEs, sqeSize, prot, flags); err != nil {
		return fmt.Errorf("uring: mmap SQE array: %w", err)
	}
	u32 := func(mem []byte, off uint32) *uint32 { return (*uint32)(unsafe.Pointer(&mem[off])) }
	r.sqHead, r.sqTail = u32(r.sqMem, p.sqOff.Head), u32(r.sqMem, p.sqOff.Tail)
	r.sqFlags, r.sqDropped = u32(r.sqMem, p.sqOff.Flags), u32(r.sqMem, p.sqOff.Dropped)
	r.sqMask, r.sqEntries = *u32(r.sqMem, p.sqOff.RingMask), *u32(r.sqMem, p.sqOff.RingEntries)
	r.sqes = unsafe.Slice((*SQE)(unsafe.Pointer(&r.sqeMem[0])), r.sqEntries)
	// The indirection array maps ring slot i to SQE i once and for all.
	array := unsafe.Slice(u32(r.sqMem, p.sqOff.Array), r.sqEntries)
	for i := range array {
		array[i] = uint32(i)
	}
	r.cqHead, r.cqTail = u32(r.cqMem, p.cqOff.Head), u32(r.cqMem, p.cqOff.Tail)
	r.cqOverflow = u32(r.cqMem, p.cqOff.Overflow)
	r.cqMask, r.cqEntries = *u32(r.cqMem, p.cqOff.RingMask), *u32(r.cqMem, p.cqOff.RingEntries)
	r.cqes = unsafe.Slice((*CQE)(unsafe.Pointer(&r.cqMem[p.cqOff.CQEs])), r.cqEntries)
	r.sqeTail = atomic.LoadUint32(r.sqTail)
	return nil
}

// Fd returns the ring's file descriptor.
func (r *Ring) Fd() int { return r.fd }

// SQEntries returns the submission ring size the kernel chose.
func (r *Ring) SQEntries() uint32 { return r.sqEntries }

// CQEntries returns the completion ring size (twice SQEntries by default).
func (r *Ring) CQEntries() uint32 { return r.cqEntries }

// Features returns the IORING_FEAT_* bits the kernel reported.
func (r *Ring) Features() uint32 { return r.params.Features }

// GetSQE hands out the next free submission entry, zeroed, or nil when the
// SQ is full (every slot is handed out or waiting for the kernel). The
// entry becomes visible to the kernel only at the next Publish.
func (r *Ring) GetSQE() *SQE {
	head := atomic.LoadUint32(r.sqHead) // acquire: the kernel consumed up to head
	if r.sqeTail-head >= r.sqEntries {
		return nil
	}
	sqe := &r.sqes[r.sqeTail&r.sqMask]
	*sqe = SQE{}
	r.sqeTail++
	return sqe
}

// Publish makes every SQE handed out so far visible to the kernel (a
// release store of the SQ tail) and returns how many the kernel has not
// consumed yet.
func (r *Ring) Publish() uint32 {
	atomic.StoreUint32(r.sqTail, r.sqeTail)
	return r.sqeTail - atomic.LoadUint32(r.sqHead)
}

// Pending returns how many published SQEs the kernel has not consumed.
func (r *Ring) Pending() uint32 {
	return atomic.LoadUint32(r.sqTail) - atomic.LoadUint32(r.sqHead)
}

// CQOverflowed reports whether completions wait in the kernel's overflow
// list, to be flushed by an enter with EnterGetEvents.
func (r *Ring) CQOverflowed() bool {
	return atomic.LoadUint32(r.sqFlags)&sqCQOverflow != 0
}

// Enter calls io_uring_enter: submit up to toSubmit published SQEs and, with
// EnterGetEvents, wait until minComplete completions are available.
func (r *Ring) Enter(toSubmit, minComplete, flags uint32) (int, error) {
	return sysEnter(r.fd, toSubmit, minComplete, flags)
}

// Ready returns how many completions are waiting in the CQ.
func (r *Ring) Ready() uint32 {
	return atomic.LoadUint32(r.cqTail) - atomic.LoadUint32(r.cqHead)
}

// Reap copies up to len(dst) waiting completions into dst, releases their
// ring slots to the kernel and returns how many it copied.
func (r *Ring) Reap(dst []CQE) int {
	head := atomic.LoadUint32(r.cqHead)
	tail := atomic.LoadUint32(r.cqTail) // acquire: CQEs before tail are written
	n := 0
	for ; head != tail && n < len(dst); head, n = head+1, n+1 {
		dst[n] = r.cqes[head&r.cqMask]
	}
	atomic.StoreUint32(r.cqHead, head) // release: the slots may be reused
	return n
}

// Close unmaps the rings and closes the ring fd; the kernel cancels any
// request still in flight.
func (r *Ring) Close() error {
	var errs []error
	if r.sqeMem != nil {
		errs = append(errs, unix.Munmap(r.sqeMem))
	}
	if r.cqMem != nil && !sameMem(r.cqMem, r.sqMem) {
		errs = append(errs, unix.Munmap(r.cqMem))
	}
	if r.sqMem != nil {
		errs = append(errs, unix.Munmap(r.sqMem))
	}
	r.sqeMem, r.cqMem, r.sqMem, r.sqes, r.cqes = nil, nil, nil, nil, nil
	if r.fd >= 0 {
		errs = append(errs, unix.Close(r.fd))
		r.fd = -1
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("uring: close ring: %w", err)
	}
	return nil
}

func sameMem(a, b []byte) bool {
	return len(a) > 0 && len(b) > 0 && &a[0] == &b[0]
}
