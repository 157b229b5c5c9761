package repl

import (
	"context"
	"sync"

	"golang.org/x/sys/unix"
)

// TerminalKeys returns a Keys function for the terminal on fd: while a
// live query runs, the terminal is put in cbreak mode (no echo, no line
// buffering, signals kept so Ctrl-C still interrupts) and single key
// presses are delivered. The terminal is restored when ctx is done; keys
// read but not yet taken stay in the channel (type-ahead for the prompt).
func TerminalKeys(fd int) func(ctx context.Context) (<-chan byte, func()) {
	return func(ctx context.Context) (<-chan byte, func()) {
		ch := make(chan byte, 256)
		var wg sync.WaitGroup
		old, err := unix.IoctlGetTermios(fd, unix.TCGETS)
		if err != nil {
			close(ch)
			return ch, wg.Wait
		}
		raw := *old
		raw.Lflag &^= unix.ICANON | unix.ECHO
		// VMIN 0: a read returns at once, even when another process on
		// the terminal (a pager) took the bytes poll reported.
		raw.Cc[unix.VMIN], raw.Cc[unix.VTIME] = 0, 0
		if err := unix.IoctlSetTermios(fd, unix.TCSETS, &raw); err != nil {
			close(ch)
			return ch, wg.Wait
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(ch)
			defer unix.IoctlSetTermios(fd, unix.TCSETS, old)
			readKeys(ctx, fd, ch)
		}()
		return ch, wg.Wait
	}
}

// keep leaves bytes read when the reader stopped in ch, as far as there
// is room, for the prompt to take.
func keep(ch chan<- byte, rest []byte) {
	for _, b := range rest {
		select {
		case ch <- b:
		default:
			return
		}
	}
}

// readKeys polls fd so that it notices ctx within 50 ms and never blocks
// in read: the terminal is in VMIN 0 mode, so a read whose bytes another
// reader took first returns 0 instead of waiting for the next key (which
// hung the REPL after a pager quit: stop waited on this goroutine).
func readKeys(ctx context.Context, fd int, ch chan<- byte) {
	buf := make([]byte, 16)
	for ctx.Err() == nil {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, 50)
		if err != nil && err != unix.EINTR {
			return
		}
		if n > 0 && fds[0].Revents&(unix.POLLHUP|unix.POLLERR|unix.POLLNVAL) != 0 {
			return
		}
		if n <= 0 || fds[0].Revents&unix.POLLIN == 0 {
			continue
		}
		m, err := unix.Read(fd, buf)
		if err == unix.EAGAIN || err == unix.EINTR {
			continue
		}
		if err != nil {
			return
		}
		for i, b := range buf[:m] {
			select {
			case ch <- b:
			case <-ctx.Done():
				keep(ch, buf[i:m])
				return
			}
		}
	}
}
