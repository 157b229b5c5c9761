//go:build linux

package uring

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// Opcodes of the io_uring operations this package prepares
// (include/uapi/linux/io_uring.h, enum io_uring_op).
const (
	OpNop         uint8 = 0
	OpTimeout     uint8 = 11
	OpAccept      uint8 = 13
	OpAsyncCancel uint8 = 14
	OpConnect     uint8 = 16
	OpClose       uint8 = 19
	OpRead        uint8 = 22
	OpWrite       uint8 = 23
	OpSend        uint8 = 26
	OpRecv        uint8 = 27
)

// Setup flags, features, enter flags and ring flags from the kernel UAPI.
const (
	// SetupClamp clamps oversized entry counts instead of failing.
	SetupClamp uint32 = 1 << 4
	// SetupCQSize honours Params.CQEntries.
	SetupCQSize uint32 = 1 << 3

	// FeatSingleMmap: the SQ and CQ rings share one mapping.
	FeatSingleMmap uint32 = 1 << 0
	// FeatNoDrop: the kernel never drops completions on CQ overflow.
	FeatNoDrop uint32 = 1 << 1

	// EnterGetEvents asks io_uring_enter to wait for min_complete CQEs.
	EnterGetEvents uint32 = 1 << 0

	// sqCQOverflow is set in the SQ flags when completions wait in the
	// kernel's overflow list.
	sqCQOverflow uint32 = 1 << 1

	offSQRing = 0
	offCQRing = 0x8000000
	offSQEs   = 0x10000000

	// timeoutETime is the errno a pure timeout completes with.
	timeoutETime = unix.ETIME
)

// sqRingOffsets mirrors struct io_sqring_offsets.
type sqRingOffsets struct {
	Head, Tail, RingMask, RingEntries, Flags, Dropped, Array, Resv1 uint32
	UserAddr                                                        uint64
}

// cqRingOffsets mirrors struct io_cqring_offsets.
type cqRingOffsets struct {
	Head, Tail, RingMask, RingEntries, Overflow, CQEs, Flags, Resv1 uint32
	UserAddr                                                        uint64
}

// Params mirrors struct io_uring_params: the request to io_uring_setup and
// the ring geometry the kernel answers with.
type Params struct {
	SQEntries    uint32
	CQEntries    uint32
	Flags        uint32
	SQThreadCPU  uint32
	SQThreadIdle uint32
	Features     uint32
	WQFd         uint32
	resv         [3]uint32
	sqOff        sqRingOffsets
	cqOff        cqRingOffsets
}

// SQE mirrors struct io_uring_sqe (64 bytes). Unions are flattened to their
// first member; the Prep helpers fill the fields each opcode reads.
type SQE struct {
	Opcode      uint8
	Flags       uint8
	IoPrio      uint16
	Fd          int32
	Off         uint64 // also addr2
	Addr        uint64
	Len         uint32
	OpFlags     uint32 // rw_flags, msg_flags, timeout_flags, accept_flags, ...
	UserData    uint64
	BufIndex    uint16
	Personality uint16
	SpliceFdIn  int32
	Addr3       uint64
	pad2        uint64
}

// CQE mirrors struct io_uring_cqe (16 bytes, no CQE32).
type CQE struct {
	UserData uint64
	Res      int32
	Flags    uint32
}

// Compile-time layout checks against the kernel ABI.
var (
	_ [64 - unsafe.Sizeof(SQE{})]byte
	_ [unsafe.Sizeof(SQE{}) - 64]byte
	_ [16 - unsafe.Sizeof(CQE{})]byte
	_ [120 - unsafe.Sizeof(Params{})]byte
	_ [unsafe.Sizeof(Params{}) - 120]byte
)

func sysSetup(entries uint32, p *Params) (int, error) {
	fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, uintptr(entries), uintptr(unsafe.Pointer(p)), 0)
	if errno != 0 {
		return -1, errno
	}
	return int(fd), nil
}

func sysEnter(fd int, toSubmit, minComplete, flags uint32) (int, error) {
	n, _, errno := unix.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(fd), uintptr(toSubmit),
		uintptr(minComplete), uintptr(flags), 0, 0)
	if errno != 0 {
		return int(n), errno
	}
	return int(n), nil
}
