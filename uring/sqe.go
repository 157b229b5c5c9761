//go:build linux

package uring

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The Prep helpers fill a zeroed SQE for one opcode. Pointers they store
// (buffers, timespecs, sockaddrs) must stay alive and unmoved until the
// completion arrives: the Reactor pins them with a runtime.Pinner.

// PrepNop prepares a no-op, used to wake a blocked wait.
func (s *SQE) PrepNop() { s.Opcode = OpNop; s.Fd = -1 }

// PrepTimeout prepares a pure timeout: it completes with -ETIME once ts has
// elapsed (relative).
func (s *SQE) PrepTimeout(ts *unix.Timespec) {
	s.Opcode, s.Fd = OpTimeout, -1
	s.Addr, s.Len = uint64(uintptr(unsafe.Pointer(ts))), 1
}

// PrepRead prepares a read of len(buf) bytes at offset off (-1: the file
// position, as for pipes and sockets).
func (s *SQE) PrepRead(fd int, buf []byte, off int64) {
	s.prepRW(OpRead, fd, buf, uint64(off))
}

// PrepWrite prepares a write of buf at offset off (-1: the file position).
func (s *SQE) PrepWrite(fd int, buf []byte, off int64) {
	s.prepRW(OpWrite, fd, buf, uint64(off))
}

// PrepRecv prepares a recv(2) into buf with msg flags.
func (s *SQE) PrepRecv(fd int, buf []byte, flags uint32) {
	s.prepRW(OpRecv, fd, buf, 0)
	s.OpFlags = flags
}

// PrepSend prepares a send(2) of buf with msg flags.
func (s *SQE) PrepSend(fd int, buf []byte, flags uint32) {
	s.prepRW(OpSend, fd, buf, 0)
	s.OpFlags = flags
}

// PrepAccept prepares accept4(2): the peer address is written to sa and
// its length to salen (which must hold sa's capacity on entry).
func (s *SQE) PrepAccept(fd int, sa *unix.RawSockaddrAny, salen *uint32, flags uint32) {
	s.Opcode, s.Fd = OpAccept, int32(fd)
	s.Addr = uint64(uintptr(unsafe.Pointer(sa)))
	s.Off = uint64(uintptr(unsafe.Pointer(salen)))
	s.OpFlags = flags
}

// PrepConnect prepares connect(2) to the raw address sa of length salen.
func (s *SQE) PrepConnect(fd int, sa *unix.RawSockaddrAny, salen uint32) {
	s.Opcode, s.Fd = OpConnect, int32(fd)
	s.Addr = uint64(uintptr(unsafe.Pointer(sa)))
	s.Off = uint64(salen)
}

// PrepClose prepares close(2) of fd.
func (s *SQE) PrepClose(fd int) { s.Opcode, s.Fd = OpClose, int32(fd) }

// PrepCancel prepares a cancel of the request submitted with userData.
func (s *SQE) PrepCancel(userData uint64) {
	s.Opcode, s.Fd = OpAsyncCancel, -1
	s.Addr = userData
}

func (s *SQE) prepRW(op uint8, fd int, buf []byte, off uint64) {
	s.Opcode, s.Fd, s.Off = op, int32(fd), off
	if len(buf) > 0 {
		s.Addr = uint64(uintptr(unsafe.Pointer(&buf[0])))
		s.Len = uint32(min(len(buf), 1<<31-1))
	}
}
