package engine

import (
	"context"
	"fmt"
	"math"
	"sort"
	"sync"
	"time"

	"clink/engine/async"
	"clink/engine/event"
	"clink/state"
)

// SourcePositionOp is the state namespace where a checkpoint records each
// source subtask's position, keyed "src/<stage>/<subtask>".
const SourcePositionOp state.OpID = math.MaxUint32

// CheckpointInfo describes one checkpoint for the TUI and for callers.
type CheckpointInfo struct {
	ID         state.CheckpointID
	DeltaKeys  int
	DeltaBytes int64
	Triggered  time.Time
	Captured   time.Time // every subtask captured: the barrier passed the job
	Persisted  time.Time
	Err        error
	Durable    bool // committed to a remote pool
}

type capturePair struct {
	backend state.PersistBackend
	capture *state.Capture
}

type pendingCheckpoint struct {
	info      CheckpointInfo
	expected  int
	acks      int
	sinkDone  bool
	captures  []capturePair
	positions map[string][]byte
	sinkState []state.Entry
}

// coordinator collects a checkpoint's captures and source positions and
// commits them as one delta, in checkpoint order, off the runners.
type coordinator struct {
	mu         sync.Mutex
	pool       state.RemotePool
	exec       async.Executor
	clock      async.Clock
	bus        *event.Bus
	seed       uint64
	maxKG      int
	pending    map[state.CheckpointID]*pendingCheckpoint
	queue      []*pendingCheckpoint // captured, waiting to commit in order
	persisting bool
	history    []CheckpointInfo
	last       state.CheckpointID // newest completed
	onDone     func(CheckpointInfo)
	changed    *sync.Cond   // signalled when a checkpoint finishes
	sink       StatefulSink // nil unless the job's sink keeps state
	// listeners are the sources told of completed checkpoints, by the
	// name their positions are recorded under.
	listeners map[string]CheckpointListener
	// sourcePar is each source stage's parallelism, recorded with every
	// checkpoint (source_rescale.go).
	sourcePar map[string]int
	// parRecorded marks the source stages whose parallelism the restored
	// checkpoint recorded.
	parRecorded map[string]bool
}

func (c *coordinator) begin(id state.CheckpointID, expected int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending[id] = &pendingCheckpoint{
		info: CheckpointInfo{ID: id, Triggered: c.clock.Now()}, expected: expected,
		positions: map[string][]byte{},
	}
}

// listen registers source subtask name for completed checkpoints.
func (c *coordinator) listen(name string, l CheckpointListener) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.listeners == nil {
		c.listeners = map[string]CheckpointListener{}
	}
	c.listeners[name] = l
}

func (c *coordinator) sourcePosition(id state.CheckpointID, name string, pos []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p := c.pending[id]; p != nil {
		p.positions[name] = pos
	}
}

func (c *coordinator) ack(id state.CheckpointID, b state.Backend, capture *state.Capture) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.pending[id]
	if p == nil {
		return
	}
	p.acks++
	if pb, ok := b.(state.PersistBackend); ok && capture != nil {
		p.captures = append(p.captures, capturePair{pb, capture})
	}
	c.maybeCapturedLocked(p)
}

func (c *coordinator) sinkBarrier(id state.CheckpointID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p := c.pending[id]; p != nil {
		p.sinkDone = true
		p.sinkState = c.sinkEntries(id)
		c.maybeCapturedLocked(p)
	}
}

func (c *coordinator) maybeCapturedLocked(p *pendingCheckpoint) {
	if p.acks < p.expected || !p.sinkDone {
		return
	}
	delete(c.pending, p.info.ID)
	p.info.Captured = c.clock.Now()
	c.queue = append(c.queue, p)
	c.persistNextLocked()
}

// persistNextLocked commits the oldest captured checkpoint, one at a time,
// so each commit's parent is the previous one.
func (c *coordinator) persistNextLocked() {
	if c.persisting || len(c.queue) == 0 {
		return
	}
	p := c.queue[0]
	c.queue = c.queue[1:]
	if c.pool == nil {
		c.finishLocked(p, nil)
		return
	}
	delta, err := c.delta(p)
	if err != nil {
		c.finishLocked(p, err)
		return
	}
	p.info.DeltaKeys, p.info.DeltaBytes = len(delta.Entries), delta.Bytes()
	c.persisting = true
	job := func() {
		err := c.pool.Commit(context.Background(), delta)
		for _, cp := range p.captures {
			if err == nil {
				cp.backend.Committed(cp.capture)
			} else {
				cp.backend.Abandon(cp.capture)
			}
		}
		c.mu.Lock()
		c.persisting = false
		if err != nil {
			err = fmt.Errorf("commit checkpoint %d: %w", p.info.ID, err)
		}
		p.info.Durable = err == nil
		c.finishLocked(p, err)
		c.persistNextLocked()
		c.mu.Unlock()
	}
	if err := c.exec.SubmitBlocking(job); err != nil {
		c.persisting = false
		c.finishLocked(p, fmt.Errorf("persist checkpoint %d: %w", p.info.ID, err))
	}
}

// delta merges the subtasks' captures and the source positions.
func (c *coordinator) delta(p *pendingCheckpoint) (*state.Delta, error) {
	names := make([]string, 0, len(p.positions))
	for n := range p.positions {
		names = append(names, n)
	}
	sort.Strings(names)
	par := c.sourceParEntries()
	d := &state.Delta{ID: p.info.ID, Parent: c.last}
	if len(p.captures) > 0 {
		caps := make([]*state.Capture, len(p.captures))
		for i, cp := range p.captures {
			caps[i] = cp.capture
		}
		merged, err := state.TakeCaptures(len(p.sinkState)+len(par)+len(names), caps...)
		if err != nil {
			return nil, fmt.Errorf("checkpoint %d: %w", p.info.ID, err)
		}
		d = merged
	}
	d.Entries = append(d.Entries, p.sinkState...)
	d.Entries = append(d.Entries, par...)
	for _, n := range names {
		key := []byte(n)
		d.Entries = append(d.Entries, state.Entry{
			Key:      state.Key{Op: SourcePositionOp, Key: key},
			KeyGroup: state.KeyGroup(state.Hash(c.seed, key), c.maxKG),
			Value:    p.positions[n],
		})
	}
	return d, nil
}

func (c *coordinator) finishLocked(p *pendingCheckpoint, err error) {
	p.info.Persisted, p.info.Err = c.clock.Now(), err
	if c.sink != nil && p.sinkDone {
		c.sink.SinkCheckpointDone(p.info.ID, err)
	}
	c.history = append(c.history, p.info)
	c.changed.Broadcast()
	if err == nil && p.info.ID > c.last {
		c.last = p.info.ID
	}
	if err == nil {
		for name, pos := range p.positions {
			if l := c.listeners[name]; l != nil {
				l.CheckpointComplete(p.info.ID, pos)
			}
		}
	}
	if c.bus.Enabled() {
		e := event.Event{Kind: event.CheckpointPersisted, Operator: "job", N: int64(p.info.DeltaKeys), M: p.info.DeltaBytes, Text: fmt.Sprintf("ckpt=%d", p.info.ID)}
		if err != nil {
			e.Kind, e.Text = event.CheckpointFailed, fmt.Sprintf("ckpt=%d %v", p.info.ID, err)
		}
		c.bus.Emit(e)
	}
	if c.onDone != nil {
		c.onDone(p.info)
	}
}

// settle waits until every captured checkpoint finished committing, and
// fails the ones whose barriers can no longer arrive (the job ended).
func (c *coordinator) settle() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.persisting || len(c.queue) > 0 {
		c.changed.Wait()
	}
	for id, p := range c.pending {
		delete(c.pending, id)
		c.finishLocked(p, fmt.Errorf("checkpoint %d: the job ended before every subtask captured it", id))
	}
}

// inProgress counts checkpoints triggered and not yet finished.
func (c *coordinator) inProgress() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(c.pending) + len(c.queue)
	if c.persisting {
		n++
	}
	return n
}

func (c *coordinator) checkpoints() []CheckpointInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]CheckpointInfo(nil), c.history...)
}
