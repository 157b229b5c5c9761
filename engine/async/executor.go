package async

import (
	"errors"
	"fmt"
	"sync"

	"golang.org/x/sys/unix"
)

// DefaultIOThreads sizes a ThreadPool when no io_threads knob is given.
const DefaultIOThreads = 8

// ErrClosed is returned when work is submitted to a closed executor.
var ErrClosed = errors.New("async: executor closed")

// Handle is a suspended computation waiting to be resumed on its runner.
type Handle interface{ Resume() }

// HandleFunc adapts a function to Handle.
type HandleFunc func()

// Resume calls f.
func (f HandleFunc) Resume() { f() }

// Scheduler hands suspended handles back to the runner that owns them. It is
// the only cross-goroutine surface of a subtask and is safe from any
// goroutine. Lower orderKey resumes sooner under priority ordering.
type Scheduler interface {
	ScheduleResume(h Handle, orderKey int64)
}

// Executor runs blocking work off the runner. It never resumes a coroutine
// itself: the job posts its handle back through a Scheduler.
type Executor interface {
	// SubmitBlocking runs job on an executor goroutine.
	SubmitBlocking(job func()) error
	// SubmitRead reads up to len(buf) bytes from fd at offset off and calls
	// done with the result on an executor goroutine.
	SubmitRead(fd int, buf []byte, off int64, done func(n int, err error)) error
	// Close stops the executor after the queued jobs have run.
	Close() error
}

// ThreadPool is the portable Executor: a fixed number of goroutines draining
// an unbounded FIFO, so submitting never blocks the runner.
type ThreadPool struct {
	mu     sync.Mutex
	cond   *sync.Cond
	queue  []func()
	closed bool
	wg     sync.WaitGroup
}

// NewThreadPool starts a pool of n goroutines. n must be positive.
func NewThreadPool(n int) (*ThreadPool, error) {
	if n <= 0 {
		return nil, fmt.Errorf("io_threads must be positive, got %d", n)
	}
	p := &ThreadPool{}
	p.cond = sync.NewCond(&p.mu)
	p.wg.Add(n)
	for i := 0; i < n; i++ {
		go p.worker()
	}
	return p, nil
}

func (p *ThreadPool) worker() {
	defer p.wg.Done()
	for {
		p.mu.Lock()
		for len(p.queue) == 0 && !p.closed {
			p.cond.Wait()
		}
		if len(p.queue) == 0 {
			p.mu.Unlock()
			return
		}
		job := p.queue[0]
		p.queue[0] = nil
		p.queue = p.queue[1:]
		p.mu.Unlock()
		job()
	}
}

// SubmitBlocking queues job.
func (p *ThreadPool) SubmitBlocking(job func()) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return ErrClosed
	}
	p.queue = append(p.queue, job)
	p.cond.Signal()
	return nil
}

// SubmitRead does a positional read on a pool goroutine.
func (p *ThreadPool) SubmitRead(fd int, buf []byte, off int64, done func(int, error)) error {
	return p.SubmitBlocking(func() {
		n, err := unix.Pread(fd, buf, off)
		done(n, err)
	})
}

// Close drains the queue and waits for the workers to exit.
func (p *ThreadPool) Close() error {
	p.mu.Lock()
	p.closed = true
	p.cond.Broadcast()
	p.mu.Unlock()
	p.wg.Wait()
	return nil
}
