package server

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"clink/sql/ops"
	"clink/sql/types"
)

// subscribeBuffer is how many barrier batches a subscriber may fall
// behind before it is dropped (the job never waits for a reader).
const subscribeBuffer = 256

// subscription is one SUBSCRIBE: the view's snapshot as of a barrier, then
// every later barrier's batch of changes, in order.
type subscription struct {
	job      *job
	cols     []column
	snapshot []types.Row
	ch       chan []ops.Change

	mu    sync.Mutex
	ended bool
	err   error
	endCh chan struct{}
}

// errBehind ends a subscriber that stopped reading.
var errBehind = errors.New("subscriber fell too far behind the view's changes")

// subscribe registers a subscription on a view, starting from its newest
// snapshot.
func (j *job) subscribe(ctx context.Context) (*subscription, error) {
	if _, err := j.snapshot(ctx); err != nil {
		return nil, err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.snap == nil {
		return nil, fmt.Errorf("materialized view %s has no contents", j.name)
	}
	s := &subscription{job: j, cols: j.cols, snapshot: j.snap.rows, ch: make(chan []ops.Change, subscribeBuffer),
		endCh: make(chan struct{})}
	if j.state != "running" && j.state != "starting" {
		s.ended = true
		close(s.endCh)
		return s, nil
	}
	j.subs[s] = struct{}{}
	return s, nil
}

// push hands a batch to the subscriber without blocking; false means it
// fell behind and was ended.
func (s *subscription) push(batch []ops.Change) bool {
	if len(batch) == 0 {
		return true
	}
	select {
	case s.ch <- batch:
		return true
	default:
		s.end(errBehind)
		return false
	}
}

// end marks the subscription over (the job stopped, or the reader fell
// behind).
func (s *subscription) end(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ended {
		s.ended, s.err = true, err
		close(s.endCh)
	}
}

// close unregisters the subscription.
func (s *subscription) close() {
	s.job.mu.Lock()
	delete(s.job.subs, s)
	s.job.mu.Unlock()
	s.end(nil)
}

// next returns the next batch of changes; it blocks until one comes, the
// view's job ends (nil, nil after the last batch) or ctx is done.
func (s *subscription) next(ctx context.Context) ([]ops.Change, error) {
	select {
	case b := <-s.ch:
		return b, nil
	default:
	}
	select {
	case b := <-s.ch:
		return b, nil
	case <-s.endCh:
		select {
		case b := <-s.ch:
			return b, nil
		default:
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		return nil, s.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// opName is a change's op column value.
func opName(k ops.Kind) string { return k.String() }
