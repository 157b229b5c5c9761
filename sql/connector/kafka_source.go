package connector

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"clink/engine"
	"clink/engine/async"
	"clink/sql/ops"
	"clink/sql/types"
	"clink/state"
)

// kafkaPart is one partition a source subtask reads: the next offset to
// emit (the checkpointed position), where a bounded scan stops, and the
// partition's own watermark and idleness.
type kafkaPart struct {
	id   int32
	next int64
	stop int64 // -1: unbounded
	wm   int64 // the highest watermark candidate of its rows
	last time.Time
	idle bool
	hwm  int64 // the high watermark (read_committed: last stable offset) last fetched; -1: none yet
}

func (p *kafkaPart) done() bool { return p.stop >= 0 && p.next >= p.stop }

// kafkaSource is one subtask of a kafka table's scan. Partition i of the
// topic (in id order) belongs to subtask i mod scan.parallelism. Each
// partition's next offset is the source's position: a checkpoint records
// it, and nothing is committed to the consumer group, so a restore resumes
// exactly at the checkpoint. The source's watermark is the minimum of its
// partitions' (an idle partition, quiet for watermark.idle-timeout, and a
// finished one do not hold it back).
type kafkaSource struct {
	t      *Table
	o      *KafkaOptions
	env    Env
	clock  async.Clock
	idleTO time.Duration
	parts  []*kafkaPart
	byID   map[int32]*kafkaPart
	// topicParts is every partition of the topic at open, in id order.
	topicParts []int32
	cl         *kgo.Client
	buf        []*kgo.Record
	bi         int
	dec        *kafkaDecoder
	wm         int64
	wmDue      bool
	state      uint8 // 0 rows, 1 final watermark sent, 2 ended
	idleOn     bool  // WatermarkIdle announced and no row since
	// pending is the second change of a debezium-json update (+U) not yet
	// emitted; its partition's next offset stays at the record (pendPart)
	// so a checkpoint cut between the two resumes with the +U alone.
	pending  *ops.Change
	pendPart *kafkaPart
	pendOff  int64
	// half (after a Seek) is the partition whose record at its next
	// offset had its first change emitted, or nil.
	half *kafkaPart
	// reach sees the consuming client's connections: a broker gone for
	// connect.max-outage fails the scan instead of waiting forever.
	reach kafkaReach
	// disc finds partitions added to the topic (unbounded scans), nil
	// until the first read.
	disc *kafkaDiscovery
	// commits is the consumer group's committer ('properties.group.id'
	// set), nil without a group.
	commits *groupCommitter
}

// openKafka resolves the subtask's partitions and their start and stop
// offsets; the consuming client starts at the first Next (after a Seek).
func openKafka(t *Table, env Env) (*kafkaSource, error) {
	o, err := ParseKafka(t)
	if err != nil {
		return nil, err
	}
	o.jobOutage(t, env.MaxOutage)
	sub, par := env.Subtask, max(env.Parallelism, 1)
	if par != o.Parallelism {
		return nil, fmt.Errorf("table %s: source subtask %d of %d, want scan.parallelism %d", t.Name, sub, par, o.Parallelism)
	}
	s := &kafkaSource{t: t, o: o, env: env, clock: env.Clock, byID: map[int32]*kafkaPart{}, wm: math.MinInt64}
	if s.clock == nil {
		s.clock = async.RealClock{}
	}
	if s.idleTO, err = IdleTimeout(t); err != nil {
		return nil, err
	}
	if _, set := t.Opt(IdleTimeoutOption); !set {
		s.idleTO = env.IdleTimeout
	}
	if s.dec, err = newKafkaDecoder(t, o, env); err != nil {
		return nil, err
	}
	adm, err := kgo.NewClient(kafkaClientOpts(o)...)
	if err != nil {
		return nil, fmt.Errorf("table %s: kafka client: %w", t.Name, err)
	}
	defer adm.Close()
	ctx, cancel := context.WithTimeout(context.Background(), o.ConnectTimeout)
	defer cancel()
	ka := kadm.NewClient(adm)
	ids, err := topicPartitions(ctx, ka, t, o)
	if err != nil {
		return nil, err
	}
	s.topicParts = ids
	var mine []int32
	for i, p := range ids {
		if i%par == sub {
			mine = append(mine, p)
		}
	}
	start, stop, err := kafkaOffsets(ctx, ka, t, o, mine)
	if err != nil {
		return nil, err
	}
	if o.Group != "" {
		s.commits = newGroupCommitter(t, o)
	}
	now := s.clock.Now()
	for _, p := range mine {
		kp := &kafkaPart{id: p, next: start[p], stop: stop[p], wm: math.MinInt64, last: now, hwm: -1}
		s.parts = append(s.parts, kp)
		s.byID[p] = kp
	}
	return s, nil
}

// Next emits the next change (+I; debezium-json: its envelope's changes),
// watermark or end.
func (s *kafkaSource) Next() (engine.Element[ops.Change], bool, error) {
	switch s.state {
	case 1:
		s.state = 2
		return engine.Element[ops.Change]{Kind: engine.EndOfInput}, true, nil
	case 2:
		return engine.Element[ops.Change]{}, false, nil
	}
	if s.wmDue {
		s.wmDue = false
		return engine.Element[ops.Change]{Kind: engine.Watermark, Watermark: s.wm}, true, nil
	}
	if ch := s.pending; ch != nil {
		s.pending = nil
		s.pendPart.next = s.pendOff + 1
		return s.emit(s.pendPart, *ch)
	}
	if s.allDone() {
		s.publishParts() // a finished bound: nothing left behind it
		s.state = 1
		return engine.Element[ops.Change]{Kind: engine.Watermark, Watermark: FinalWatermark}, true, nil
	}
	if err := s.startDiscovery(); err != nil {
		return engine.Element[ops.Change]{}, false, err
	}
	s.discovered()
	if err := s.start(); err != nil {
		return engine.Element[ops.Change]{}, false, err
	}
	for {
		r, err := s.record()
		if err != nil {
			return engine.Element[ops.Change]{}, false, err
		}
		if r == nil {
			return s.quiet()
		}
		p := s.byID[r.Partition]
		if p == nil || r.Offset < p.next || p.done() {
			continue // not ours, already emitted, or past the bound
		}
		if p.stop >= 0 && r.Offset >= p.stop {
			p.next = p.stop // every record before the bound was seen
			s.partChanged()
			continue
		}
		p.next = r.Offset + 1
		if r.Attrs.IsControl() || r.Value == nil && !s.o.Upsert {
			continue // a transaction marker, or a tombstone (upsert-kafka: a delete)
		}
		half := s.half == p // its first record since the Seek
		if half {
			s.half = nil
		}
		chs, err := s.dec.changes(r)
		if err != nil {
			if err := s.dec.bad(r, err); err != nil {
				return engine.Element[ops.Change]{}, false, err
			}
			continue
		}
		if half && len(chs) == 2 {
			chs = chs[1:]
		}
		if len(chs) == 2 {
			p.next = r.Offset // until the +U is emitted
			s.pending, s.pendPart, s.pendOff = &chs[1], p, r.Offset
		}
		return s.emit(p, chs[0])
	}
}

// emit returns a change of partition p, raising p's watermark by its row.
func (s *kafkaSource) emit(p *kafkaPart, ch ops.Change) (engine.Element[ops.Change], bool, error) {
	p.last, p.idle, s.idleOn = s.clock.Now(), false, false
	row, err := s.t.Extend(ch.Row, p.last)
	if err != nil {
		return engine.Element[ops.Change]{}, false, fmt.Errorf("source %s: %w", s.t.Name, err)
	}
	ch.Row = row
	if w := s.t.Watermark; w != nil {
		v, err := w.Eval(ch.Row)
		if err != nil {
			return engine.Element[ops.Change]{}, false, fmt.Errorf("source %s: watermark: %w", s.t.Name, err)
		}
		if !v.IsNull() && v.Int() > p.wm {
			p.wm = v.Int()
			s.partChanged()
		}
	}
	return engine.Element[ops.Change]{Kind: engine.Data, Data: ch}, true, nil
}

func (s *kafkaSource) allDone() bool {
	for _, p := range s.parts {
		if !p.done() {
			return false
		}
	}
	return s.o.Bounded() || len(s.parts) > 0
}

// partChanged recomputes the source's watermark: the minimum over the
// partitions still read and not idle.
func (s *kafkaSource) partChanged() {
	if s.t.Watermark == nil {
		return
	}
	m, any := int64(math.MaxInt64), false
	for _, p := range s.parts {
		if p.done() || p.idle {
			continue
		}
		any = true
		m = min(m, p.wm)
	}
	if any && m > s.wm {
		s.wm, s.wmDue = m, true
	}
}

// quiet is Next with nothing buffered: partitions quiet for the idle
// timeout stop holding the watermark back, and when every partition is
// idle the source announces WatermarkIdle once.
func (s *kafkaSource) quiet() (engine.Element[ops.Change], bool, error) {
	if s.wmDue {
		s.wmDue = false
		return engine.Element[ops.Change]{Kind: engine.Watermark, Watermark: s.wm}, true, nil
	}
	if s.idleOn {
		return engine.Element[ops.Change]{}, false, nil
	}
	live := 0
	if s.idleTO > 0 {
		now := s.clock.Now()
		for _, p := range s.parts {
			if p.done() || p.idle {
				continue
			}
			if now.Sub(p.last) >= s.idleTO {
				p.idle = true
				s.partChanged()
				continue
			}
			live++
		}
	} else if len(s.parts) > 0 {
		live = 1
	}
	if s.wmDue {
		s.wmDue = false
		return engine.Element[ops.Change]{Kind: engine.Watermark, Watermark: s.wm}, true, nil
	}
	if live == 0 {
		s.idleOn = true
		return engine.Element[ops.Change]{Kind: engine.Watermark, Watermark: engine.WatermarkIdle}, true, nil
	}
	return engine.Element[ops.Change]{}, false, nil
}

// start creates the consuming client at the partitions' next offsets.
func (s *kafkaSource) start() error {
	if s.cl != nil {
		return nil
	}
	offs := map[int32]kgo.Offset{}
	for _, p := range s.parts {
		if !p.done() {
			offs[p.id] = kgo.NewOffset().At(p.next)
		}
	}
	if len(offs) == 0 {
		return nil
	}
	opts := append(kafkaClientOpts(s.o),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{s.o.Topic: offs}),
		kgo.KeepControlRecords(), kgo.RetryTimeout(0), kgo.WithHooks(&s.reach))
	if s.o.ReadCommitted {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return fmt.Errorf("table %s: kafka consumer: %w", s.t.Name, err)
	}
	s.cl = cl
	return nil
}

// record returns the next fetched record, nil when none is buffered. It
// never blocks: the client fetches in the background. A broker that went
// away is retried by the client until it has been gone for
// connect.max-outage; a fatal error fails the query.
func (s *kafkaSource) record() (*kgo.Record, error) {
	if s.bi < len(s.buf) {
		r := s.buf[s.bi]
		s.buf[s.bi] = nil
		s.bi++
		return r, nil
	}
	if s.cl == nil {
		return nil, nil
	}
	fs := s.cl.PollRecords(nil, 4096) //nolint:staticcheck // nil: return what is buffered, do not wait
	for _, fe := range fs.Errors() {
		var ke *kerr.Error
		if errors.As(fe.Err, &ke) && !ke.Retriable || errors.Is(fe.Err, kgo.ErrClientClosed) {
			return nil, fmt.Errorf("table %s: topic %q partition %d: %w", s.t.Name, fe.Topic, fe.Partition, fe.Err)
		}
	}
	s.buf, s.bi = fs.Records(), 0
	s.publishLag(fs)
	if len(s.buf) == 0 {
		return nil, s.reach.check(s.t, s.o, s.o.MaxOutage)
	}
	r := s.buf[0]
	s.buf[0] = nil
	s.bi = 1
	return r, nil
}

// publishLag notes the partitions' high watermarks from a poll's fetches
// and publishes each partition's lag behind it: every record not yet
// emitted, the ones just fetched included. It runs once per poll, when
// the buffer is empty, so the per-record path pays nothing.
func (s *kafkaSource) publishLag(fs kgo.Fetches) {
	if s.env.KafkaLag == nil {
		return
	}
	fs.EachPartition(func(fp kgo.FetchTopicPartition) {
		if p := s.byID[fp.Partition]; p != nil && fp.Err == nil {
			p.hwm = fp.HighWatermark
			if s.o.ReadCommitted && fp.LastStableOffset >= 0 {
				p.hwm = fp.LastStableOffset
			}
		}
	})
	s.publishParts()
}

// publishParts publishes the lag of every partition whose high watermark
// is known.
func (s *kafkaSource) publishParts() {
	if s.env.KafkaLag == nil {
		return
	}
	for _, p := range s.parts {
		if p.hwm >= 0 {
			s.env.KafkaLag.Set(s.o.Topic, p.id, p.hwm-p.next)
		}
	}
}

// CheckpointComplete commits the offsets checkpoint id recorded to the
// consumer group, now that the checkpoint is complete (engine.
// CheckpointListener; a table without 'properties.group.id' commits
// nothing). The commit runs off the caller, on the group committer.
func (s *kafkaSource) CheckpointComplete(id state.CheckpointID, pos []byte) {
	if s.commits == nil {
		return
	}
	parts, _, err := s.decodeKafkaPos(pos)
	if err != nil {
		return // not this source's position: nothing to commit
	}
	next := make(map[int32]int64, len(parts))
	for _, p := range parts {
		next[p.id] = p.next
	}
	s.commits.offer(id, next)
}

// Close stops the consuming client, the partition discovery and the
// group committer.
func (s *kafkaSource) Close() error {
	s.stopDiscovery()
	if s.cl != nil {
		s.cl.Close()
		s.cl = nil
	}
	if s.commits != nil {
		s.commits.close()
	}
	return nil
}

// kafkaMetaValue is a record's value for a METADATA column.
func kafkaMetaValue(r *kgo.Record, key string, typ types.Type) types.Value {
	switch key {
	case "timestamp":
		return types.NewTimestamp(r.Timestamp.UnixMilli())
	case "partition":
		if typ.Kind == types.KindInt {
			return types.NewInt(int64(r.Partition))
		}
		return types.NewBigInt(int64(r.Partition))
	case "offset":
		return types.NewBigInt(r.Offset)
	case "key":
		if r.Key == nil {
			return types.NullValue
		}
		return types.NewVarchar(string(r.Key))
	case "topic":
		return types.NewVarchar(r.Topic)
	}
	return types.NullValue
}
