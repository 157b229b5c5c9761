//go:build linux

package uring

import (
	"errors"
	"testing"

	"golang.org/x/sys/unix"
)

// listen opens a TCP listener on 127.0.0.1 with a kernel-chosen port.
func listen(t *testing.T) (int, *unix.SockaddrInet4) {
	t.Helper()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := unix.Listen(fd, 16); err != nil {
		t.Fatal(err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return fd, sa.(*unix.SockaddrInet4)
}

func socket(t *testing.T) int {
	t.Helper()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	return fd
}

func TestTCPAcceptConnectSendRecvClose(t *testing.T) {
	r := newReactor(t, Options{})
	rn := newRunner(t)
	lfd, addr := listen(t)

	accepted := make(chan Result, 1)
	rn.run(func() { awaitInto(r.Task(AcceptOp(lfd), rn), accepted) })

	cfd := socket(t)
	if res := await(rn, r.Task(ConnectOp(cfd, addr), rn)); res.Err != nil {
		t.Fatalf("connect: %v", res.Err)
	}
	acc := <-accepted
	if acc.Err != nil || acc.N <= 0 {
		t.Fatalf("accept: %+v", acc)
	}
	peer, ok := acc.Peer.(*unix.SockaddrInet4)
	if !ok || peer.Addr != [4]byte{127, 0, 0, 1} || peer.Port == 0 {
		t.Fatalf("accepted peer %#v", acc.Peer)
	}
	local, _ := unix.Getsockname(cfd)
	if peer.Port != local.(*unix.SockaddrInet4).Port {
		t.Fatalf("peer port %d, client port %d", peer.Port, local.(*unix.SockaddrInet4).Port)
	}
	sfd := acc.N

	exchanges := []struct {
		name     string
		from, to int
		msg      string
	}{
		{"client to server", cfd, sfd, "GET / HTTP/1.1\r\n\r\n"},
		{"server to client", sfd, cfd, "HTTP/1.1 200 OK\r\n\r\n"},
	}
	for _, ex := range exchanges {
		t.Run(ex.name, func(t *testing.T) {
			buf := make([]byte, 64)
			recv := make(chan Result, 1)
			rn.run(func() { awaitInto(r.Recv(ex.to, buf), recv) }) // parked before the send
			if res := await(rn, r.Task(SendOp(ex.from, []byte(ex.msg), 0), rn)); res.Err != nil || res.N != len(ex.msg) {
				t.Fatalf("send: %+v", res)
			}
			res := <-recv
			if res.Err != nil || string(buf[:res.N]) != ex.msg {
				t.Fatalf("recv: %+v %q", res, buf[:res.N])
			}
		})
	}
	for _, fd := range []int{cfd, sfd} {
		if res := await(rn, r.Close(fd)); res.Err != nil {
			t.Fatalf("close %d: %v", fd, res.Err)
		}
	}
	if err := unix.Close(cfd); !errors.Is(err, unix.EBADF) {
		t.Fatalf("fd still open after ring close: %v", err)
	}
}

func TestConnectRefused(t *testing.T) {
	r := newReactor(t, Options{})
	lfd, addr := listen(t)
	unix.Close(lfd) // the port is now closed
	cfd := socket(t)
	defer unix.Close(cfd)
	res := r.Do(ConnectOp(cfd, addr))
	if !errors.Is(res.Err, unix.ECONNREFUSED) {
		t.Fatalf("connect to a closed port: %v, want ECONNREFUSED", res.Err)
	}
}

func TestSockaddrRoundTrip(t *testing.T) {
	tests := []unix.Sockaddr{
		&unix.SockaddrInet4{Port: 8080, Addr: [4]byte{127, 0, 0, 1}},
		&unix.SockaddrInet6{Port: 443, ZoneId: 2, Addr: [16]byte{15: 1}},
		&unix.SockaddrUnix{Name: "/tmp/clink.sock"},
	}
	for _, sa := range tests {
		var raw unix.RawSockaddrAny
		if _, err := encodeSockaddr(sa, &raw); err != nil {
			t.Fatal(err)
		}
		got := decodeSockaddr(&raw)
		switch want := sa.(type) {
		case *unix.SockaddrInet4:
			if g := got.(*unix.SockaddrInet4); *g != *want {
				t.Errorf("got %+v want %+v", g, want)
			}
		case *unix.SockaddrInet6:
			if g := got.(*unix.SockaddrInet6); *g != *want {
				t.Errorf("got %+v want %+v", g, want)
			}
		case *unix.SockaddrUnix:
			if g := got.(*unix.SockaddrUnix); g.Name != want.Name {
				t.Errorf("got %+v want %+v", g, want)
			}
		}
	}
	long := &unix.SockaddrUnix{Name: string(make([]byte, 200))}
	if _, err := encodeSockaddr(long, new(unix.RawSockaddrAny)); err == nil {
		t.Error("overlong unix path accepted")
	}
}
