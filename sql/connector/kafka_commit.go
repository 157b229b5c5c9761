package connector

import (
	"context"
	"fmt"
	"sync"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"clink/state"
)

// groupCommitter commits a kafka source subtask's offsets to its consumer
// group ('properties.group.id') after each checkpoint that holds them
// completed, never before, as Flink does: the group's offsets are for
// monitoring (lag in the broker's tools) and for a fresh start with
// 'scan.startup.mode' = 'group-offsets'; a restore always resumes from the
// checkpoint's own offsets. Commits run on one goroutine of their own,
// newest checkpoint first (an older one still waiting is dropped); a
// failed commit is not retried until the next checkpoint completes, and
// never fails the query. Close stops the goroutine.
type groupCommitter struct {
	t  *Table
	o  *KafkaOptions
	mu sync.Mutex
	// cond is signalled when work arrives, a commit ends or Close runs.
	cond    *sync.Cond
	started bool
	closed  bool
	busy    bool
	pending kadm.Offsets // the newest completed checkpoint's, not yet committed
	pendID  state.CheckpointID
	doneID  state.CheckpointID // newest committed
	lastErr error
	cancel  context.CancelFunc
	exited  chan struct{}
}

func newGroupCommitter(t *Table, o *KafkaOptions) *groupCommitter {
	c := &groupCommitter{t: t, o: o, exited: make(chan struct{})}
	c.cond = sync.NewCond(&c.mu)
	return c
}

// offer queues checkpoint id's offsets (partition: next offset to read).
func (c *groupCommitter) offer(id state.CheckpointID, next map[int32]int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || id <= c.doneID || id <= c.pendID {
		return
	}
	offs := kadm.Offsets{}
	for p, at := range next {
		offs.Add(kadm.Offset{Topic: c.o.Topic, Partition: p, At: at, LeaderEpoch: -1})
	}
	c.pending, c.pendID = offs, id
	if !c.started {
		c.started = true
		ctx, cancel := context.WithCancel(context.Background())
		c.cancel = cancel
		go c.loop(ctx)
	}
	c.cond.Broadcast()
}

func (c *groupCommitter) loop(ctx context.Context) {
	defer close(c.exited)
	cl, err := kgo.NewClient(kafkaClientOpts(c.o)...)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		c.lastErr = fmt.Errorf("table %s: group %q: kafka client: %w", c.t.Name, c.o.Group, err)
		return
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	for {
		for !c.closed && c.pending == nil {
			c.cond.Wait()
		}
		if c.closed {
			return
		}
		offs, id := c.pending, c.pendID
		c.pending, c.busy = nil, true
		c.mu.Unlock()
		err := c.commit(ctx, adm, offs)
		c.mu.Lock()
		c.busy = false
		if err == nil {
			c.doneID = max(c.doneID, id)
		}
		c.lastErr = err
		c.cond.Broadcast()
	}
}

// commit commits offs to the group within connect.timeout.
func (c *groupCommitter) commit(ctx context.Context, adm *kadm.Client, offs kadm.Offsets) error {
	ctx, cancel := context.WithTimeout(ctx, c.o.ConnectTimeout)
	defer cancel()
	resp, err := adm.CommitOffsets(ctx, c.o.Group, offs)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		return fmt.Errorf("table %s: commit offsets of topic %q to group %q: %w", c.t.Name, c.o.Topic, c.o.Group, err)
	}
	return nil
}

// settle waits until nothing is queued or being committed, and returns
// the newest committed checkpoint and the last commit's error.
func (c *groupCommitter) settle() (state.CheckpointID, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.started && !c.closed && (c.pending != nil || c.busy) {
		c.cond.Wait()
	}
	return c.doneID, c.lastErr
}

// close stops the goroutine (an in-flight commit is cancelled) and waits
// for it.
func (c *groupCommitter) close() {
	c.mu.Lock()
	c.closed = true
	started := c.started
	if c.cancel != nil {
		c.cancel()
	}
	c.cond.Broadcast()
	c.mu.Unlock()
	if started {
		<-c.exited
	}
}
