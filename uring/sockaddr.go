//go:build linux

package uring

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// encodeSockaddr writes sa in the kernel's layout into raw and returns its
// length. x/sys/unix keeps this conversion unexported, so it is repeated
// here for the address families the reactor connects to.
func encodeSockaddr(sa unix.Sockaddr, raw *unix.RawSockaddrAny) (uint32, error) {
	*raw = unix.RawSockaddrAny{}
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		p := (*unix.RawSockaddrInet4)(unsafe.Pointer(raw))
		p.Family = unix.AF_INET
		p.Port = htons(a.Port)
		p.Addr = a.Addr
		return unix.SizeofSockaddrInet4, nil
	case *unix.SockaddrInet6:
		p := (*unix.RawSockaddrInet6)(unsafe.Pointer(raw))
		p.Family = unix.AF_INET6
		p.Port = htons(a.Port)
		p.Scope_id = a.ZoneId
		p.Addr = a.Addr
		return unix.SizeofSockaddrInet6, nil
	case *unix.SockaddrUnix:
		p := (*unix.RawSockaddrUnix)(unsafe.Pointer(raw))
		if len(a.Name) >= len(p.Path) {
			return 0, fmt.Errorf("uring: unix socket path too long (%d bytes)", len(a.Name))
		}
		p.Family = unix.AF_UNIX
		for i := 0; i < len(a.Name); i++ {
			p.Path[i] = int8(a.Name[i])
		}
		return uint32(unsafe.Offsetof(p.Path)) + uint32(len(a.Name)) + 1, nil
	case nil:
		return 0, fmt.Errorf("uring: nil socket address")
	}
	return 0, fmt.Errorf("uring: unsupported socket address type %T", sa)
}

// decodeSockaddr reads a peer address the kernel wrote; nil when the family
// is not one the reactor knows.
func decodeSockaddr(raw *unix.RawSockaddrAny) unix.Sockaddr {
	switch raw.Addr.Family {
	case unix.AF_INET:
		p := (*unix.RawSockaddrInet4)(unsafe.Pointer(raw))
		return &unix.SockaddrInet4{Port: ntohs(p.Port), Addr: p.Addr}
	case unix.AF_INET6:
		p := (*unix.RawSockaddrInet6)(unsafe.Pointer(raw))
		return &unix.SockaddrInet6{Port: ntohs(p.Port), ZoneId: p.Scope_id, Addr: p.Addr}
	case unix.AF_UNIX:
		p := (*unix.RawSockaddrUnix)(unsafe.Pointer(raw))
		n := 0
		for n < len(p.Path) && p.Path[n] != 0 {
			n++
		}
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(p.Path[i])
		}
		return &unix.SockaddrUnix{Name: string(b)}
	}
	return nil
}

// htons stores port in network byte order as the uint16 the raw struct
// holds in host memory.
func htons(port int) uint16 {
	b := [2]byte{byte(port >> 8), byte(port)}
	return *(*uint16)(unsafe.Pointer(&b[0]))
}

func ntohs(v uint16) int {
	b := (*[2]byte)(unsafe.Pointer(&v))
	return int(b[0])<<8 | int(b[1])
}
