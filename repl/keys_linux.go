package repl

import (
	"context"
	"sync"

	"golang.org/x/sys/unix"
)

// TerminalKeys returns a Keys function for the terminal on fd: while a
// live query runs, the terminal is put in cbreak mode (no echo, no line
// buffering, signals kept so Ctrl-C still interrupts) and single key
// presses are delivered. The terminal is restored when ctx is done.
func TerminalKeys(fd int) func(ctx context.Context) (<-chan byte, func()) {
	return func(ctx context.Context) (<-chan byte, func()) {
		ch := make(chan byte, 16)
		var wg sync.WaitGroup
		old, err := unix.IoctlGetTermios(fd, unix.TCGETS)
		if err != nil {
			close(ch)
			return ch, wg.Wait
		}
		raw := *old
		raw.Lflag &^= unix.ICANON | unix.ECHO
		raw.Cc[unix.VMIN], raw.Cc[unix.VTIME] = 1, 0
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

// readKeys polls fd so that it notices ctx within 50 ms and never blocks
// in read.
func readKeys(ctx context.Context, fd int, ch chan<- byte) {
	buf := make([]byte, 16)
	for ctx.Err() == nil {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, 50)
		if err != nil && err != unix.EINTR {
			return
		}
		if n <= 0 || fds[0].Revents&unix.POLLIN == 0 {
			continue
		}
		m, err := unix.Read(fd, buf)
		if err != nil || m == 0 {
			return
		}
		for _, b := range buf[:m] {
			select {
			case ch <- b:
			case <-ctx.Done():
				return
			}
		}
	}
}
