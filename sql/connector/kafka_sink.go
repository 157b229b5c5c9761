package connector

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"clink/sql/ops"
	"clink/state"
)

// KafkaSink writes a query's changes to a kafka or upsert-kafka table.
//
// Exactly-once (sink.delivery-guarantee, the default on a durable state
// URI) is a two-phase commit with the checkpoint, as the file sinks'
// (txnsink.go): the changes since the previous barrier are staged at each
// checkpoint's barrier in the checkpoint itself (SnapshotSink), and when
// the checkpoint completes every staged epoch up to it is produced in one
// Kafka transaction together with a commit marker (run, checkpoint) on
// sink.commit-topic, keyed by the transactional id. A restore of
// checkpoint C reads the marker: staged epochs after the marker's
// checkpoint are published, the rest were already. The transactional id
// (sink.transactional-id-prefix + "-0") fences a producer left by a
// crashed process and aborts its open transaction, so read_committed
// consumers see each change once. At-least-once produces as changes come
// and flushes at each barrier; none only produces.
type KafkaSink struct {
	mu      sync.Mutex
	t       *Table
	o       *KafkaOptions
	enc     *kafkaEncoder
	mode    string
	run     string
	restore state.CheckpointID
	cl      *kgo.Client
	txnID   string
	cur     []kafkaMsg          // exactly-once: changes since the last barrier
	staged  []*kafkaEpoch       // exactly-once: barriers not yet published
	stage   kafkaStageKeys      // what the checkpoint holds
	mark    kafkaMarker         // the newest published marker
	held    map[string]kafkaMsg // upsert: per key, a -U waiting to see whether its +U follows

	// downSince is when the first of the failed publishes since the last
	// one that succeeded was tried (zero: the last publish succeeded).
	downSince time.Time

	errMu sync.Mutex
	err   error // the first produce error (at-least-once, none)
}

// KafkaSinkCheck refuses an updating query into a table whose format
// takes only inserts (format json), as Flink does.
func KafkaSinkCheck(t *Table, updating bool) error {
	o, err := ParseKafka(t)
	if err != nil {
		return err
	}
	if updating && !o.Upsert && o.Format != FormatDebezium {
		return fmt.Errorf("table %s (connector kafka, format %s) takes only inserts, and this query updates its results (-U/+U/-D): "+
			"write it with format 'debezium-json', or to connector 'upsert-kafka' with a PRIMARY KEY", t.Name, o.Format)
	}
	return nil
}

// OpenKafkaSink prepares the sink of table t for run (the query's
// checkpoint name); restore is the checkpoint the query resumes from (0:
// fresh), durable whether checkpoints outlive the process (the default
// guarantee is exactly-once only then); maxOutage is the job's outage
// limit, as Env.MaxOutage.
func OpenKafkaSink(t *Table, run string, restore state.CheckpointID, durable bool, maxOutage time.Duration) (*KafkaSink, error) {
	o, err := ParseKafka(t)
	if err != nil {
		return nil, err
	}
	o.jobOutage(t, maxOutage)
	s := &KafkaSink{t: t, o: o, enc: newKafkaEncoder(t, o), mode: o.Delivery, run: run, restore: restore,
		txnID: o.TxnPrefix + "-0"}
	if s.mode == "" {
		s.mode = "at-least-once"
		if durable {
			s.mode = "exactly-once"
		}
	}
	if err := s.connect(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.ConnectTimeout)
	defer cancel()
	adm := kadm.NewClient(s.cl)
	if _, err := topicPartitions(ctx, adm, t, o); err != nil {
		s.cl.Close()
		return nil, err
	}
	if s.mode == "exactly-once" {
		if s.mark, err = readMarker(ctx, s.cl, adm, t, o, s.txnID); err != nil {
			s.cl.Close()
			return nil, err
		}
		if s.mark.Run != run {
			s.mark = kafkaMarker{Run: run}
		}
		if restore == 0 {
			s.mark = kafkaMarker{Run: run}
		} else if s.mark.Checkpoint > restore && !s.mark.Final {
			s.cl.Close()
			return nil, fmt.Errorf("table %s: topic %q already holds the output up to checkpoint %d of %s, newer than checkpoint %d: restore %d or later",
				t.Name, o.Topic, s.mark.Checkpoint, run, restore, s.mark.Checkpoint)
		}
	}
	return s, nil
}

// connect creates the producer (exactly-once: with the transactional id,
// whose first transaction fences an earlier producer and aborts its open
// transaction).
func (s *KafkaSink) connect() error {
	opts := kafkaClientOpts(s.o)
	if s.mode == "exactly-once" {
		opts = append(opts, kgo.TransactionalID(s.txnID), kgo.TransactionTimeout(time.Minute))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return fmt.Errorf("table %s: kafka producer: %w", s.t.Name, err)
	}
	s.cl = cl
	return nil
}

// Mode is the delivery guarantee in force.
func (s *KafkaSink) Mode() string { return s.mode }

// Complete reports whether a previous run of this checkpoint name already
// published the whole output (the restarted statement is skipped).
func (s *KafkaSink) Complete() bool { return s.restore > 0 && s.mark.Final }

// Write takes one change (called in sink order).
func (s *KafkaSink) Write(ch ops.Change) {
	m := s.enc.encode(ch)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.o.Upsert {
		s.emitLocked(m)
		return
	}
	if h, ok := s.held[string(m.key)]; ok {
		delete(s.held, string(m.key))
		if ch.Kind != ops.UpdateAfter {
			s.emitLocked(h) // its +U was filtered out: the key is gone
		}
	}
	if ch.Kind == ops.UpdateBefore {
		if s.held == nil {
			s.held = map[string]kafkaMsg{}
		}
		s.held[string(m.key)] = m
		return
	}
	s.emitLocked(m)
}

// flushHeldLocked emits the held -Us whose +U never came, as tombstones
// (at a barrier or the end), in key order.
func (s *KafkaSink) flushHeldLocked() {
	if len(s.held) == 0 {
		return
	}
	keys := make([]string, 0, len(s.held))
	for k := range s.held {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		s.emitLocked(s.held[k])
	}
	clear(s.held)
}

func (s *KafkaSink) emitLocked(m kafkaMsg) {
	if s.mode == "exactly-once" {
		s.cur = append(s.cur, m)
		return
	}
	s.cl.Produce(context.Background(), s.record(m), func(_ *kgo.Record, err error) {
		if err != nil {
			s.setErr(err)
		}
	})
}

func (s *KafkaSink) record(m kafkaMsg) *kgo.Record {
	r := &kgo.Record{Topic: s.o.Topic, Key: m.key, Value: m.value}
	if m.ts != 0 {
		r.Timestamp = time.UnixMilli(m.ts)
	}
	return r
}

func (s *KafkaSink) setErr(err error) {
	s.errMu.Lock()
	defer s.errMu.Unlock()
	if s.err == nil {
		s.err = fmt.Errorf("table %s: produce to topic %q: %w", s.t.Name, s.o.Topic, err)
	}
}

// Err is the first produce error, if any.
func (s *KafkaSink) Err() error {
	s.errMu.Lock()
	defer s.errMu.Unlock()
	return s.err
}

// Barrier ends the epoch of checkpoint id: exactly-once stages its
// changes (SnapshotSink puts them in the checkpoint), at-least-once
// waits until every change so far is acknowledged.
func (s *KafkaSink) Barrier(id state.CheckpointID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.flushHeldLocked()
	switch s.mode {
	case "exactly-once":
		s.staged = append(s.staged, &kafkaEpoch{id: id, msgs: s.cur})
		s.cur = nil
	case "at-least-once":
		if err := s.cl.Flush(context.Background()); err != nil {
			s.setErr(err)
		}
	}
}

// Committed publishes the staged epochs up to checkpoint id, which has
// completed (the session's onCommit hook).
func (s *KafkaSink) Committed(id state.CheckpointID) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mode != "exactly-once" {
		return s.Err()
	}
	return s.retryLocked(s.publishLocked(id, false, nil))
}

// retryLocked takes a publish's outcome: a failed transaction stays
// staged (in this and later checkpoints) and is published with the next
// completed checkpoint, once the broker answers again; only when no
// publish succeeded for connect.max-outage does it fail the query, naming
// the brokers, the topic and the last error.
func (s *KafkaSink) retryLocked(err error) error {
	if err == nil {
		s.downSince = time.Time{}
		return nil
	}
	if errors.Is(err, kerr.ProducerFenced) || errors.Is(err, kerr.InvalidProducerEpoch) {
		return err // another producer took the transactional id: never retried
	}
	now := time.Now()
	if s.downSince.IsZero() {
		s.downSince = now
	}
	if d := now.Sub(s.downSince); s.o.MaxOutage > 0 && d >= s.o.MaxOutage {
		return fmt.Errorf("table %s: Kafka at %s, topic %q: no transaction committed for %s (connect.max-outage %s), the output stops at checkpoint %d: %w",
			s.t.Name, strings.Join(s.o.Brokers, ","), s.o.Topic, d.Round(100*time.Millisecond), s.o.MaxOutage, s.mark.Checkpoint, err)
	}
	return nil
}

// Finish publishes everything left at the end of the query, marked
// final; at-least-once flushes.
func (s *KafkaSink) Finish() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.flushHeldLocked()
	if s.mode != "exactly-once" {
		if err := s.cl.Flush(context.Background()); err != nil {
			s.setErr(err)
		}
		return s.Err()
	}
	last := s.mark.Checkpoint
	for _, e := range s.staged {
		last = max(last, e.id)
	}
	cur := s.cur
	s.cur = nil
	for {
		err := s.publishLocked(last, true, cur)
		if err == nil {
			return nil
		}
		if err := s.retryLocked(err); err != nil {
			return err
		}
		time.Sleep(s.o.ConnectTimeout / 4) // the broker is down: try again
	}
}

// publishLocked produces the staged epochs up to id (and extra, the
// changes after the last barrier at the end) in one transaction with the
// commit marker.
func (s *KafkaSink) publishLocked(id state.CheckpointID, final bool, extra []kafkaMsg) error {
	var due []*kafkaEpoch
	keep := s.staged[:0]
	for _, e := range s.staged {
		if e.id <= id {
			due = append(due, e)
		} else {
			keep = append(keep, e)
		}
	}
	ctx := context.Background()
	if s.cl == nil {
		if err := s.connect(); err != nil {
			return err
		}
	}
	if err := s.cl.BeginTransaction(); err != nil {
		return fmt.Errorf("table %s: begin transaction %s: %w", s.t.Name, s.txnID, err)
	}
	for _, e := range due {
		for _, m := range e.msgs {
			s.cl.Produce(ctx, s.record(m), func(_ *kgo.Record, err error) {
				if err != nil {
					s.setErr(err)
				}
			})
		}
	}
	for _, m := range extra {
		s.cl.Produce(ctx, s.record(m), func(_ *kgo.Record, err error) {
			if err != nil {
				s.setErr(err)
			}
		})
	}
	mark := kafkaMarker{Run: s.run, Checkpoint: max(id, s.mark.Checkpoint), Final: final}
	s.cl.Produce(ctx, &kgo.Record{Topic: s.o.CommitTopic, Key: []byte(s.txnID), Value: mark.encode()}, func(_ *kgo.Record, err error) {
		if err != nil {
			s.setErr(err)
		}
	})
	fctx, cancel := context.WithTimeout(ctx, s.o.ConnectTimeout) // a broker down: produces retry forever
	ferr := s.cl.Flush(fctx)
	cancel()
	if ferr == nil {
		ferr = s.Err()
	}
	if ferr != nil {
		abortErr := s.cl.EndTransaction(ctx, kgo.TryAbort)
		s.dropClientLocked()
		return fmt.Errorf("table %s: Kafka at %s, topic %q: transaction %s for checkpoint %d: %w",
			s.t.Name, strings.Join(s.o.Brokers, ","), s.o.Topic, s.txnID, id, errors.Join(ferr, abortErr))
	}
	if err := s.cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		s.dropClientLocked()
		return fmt.Errorf("table %s: Kafka at %s, topic %q: commit transaction %s for checkpoint %d: %w",
			s.t.Name, strings.Join(s.o.Brokers, ","), s.o.Topic, s.txnID, id, err)
	}
	s.mark = mark
	s.staged = keep
	for _, e := range due {
		s.stage.published(e)
	}
	return nil
}

// dropClientLocked closes a producer whose transaction failed: the next
// publish opens a new one with the same transactional id, which aborts
// whatever the broker kept of the failed transaction.
func (s *KafkaSink) dropClientLocked() {
	s.cl.Close()
	s.cl = nil
	s.errMu.Lock()
	s.err = nil
	s.errMu.Unlock()
}

// Close releases the producer; an open transaction is left for the
// broker to abort (a restore publishes its changes from the checkpoint).
func (s *KafkaSink) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cl != nil {
		s.cl.Close()
		s.cl = nil
	}
}

// Describe is the sink's guarantee and transactional id, for messages.
func (s *KafkaSink) Describe() string {
	if s.mode != "exactly-once" {
		return s.mode
	}
	return fmt.Sprintf("exactly-once, transactional id %s, commit markers on %s", s.txnID, s.o.CommitTopic)
}

// readMarker reads the newest commit marker of txnID on the commit topic
// (read_committed, so an aborted marker does not count), creating the
// topic when it is missing.
func readMarker(ctx context.Context, cl *kgo.Client, adm *kadm.Client, t *Table, o *KafkaOptions, txnID string) (kafkaMarker, error) {
	if _, err := adm.CreateTopic(ctx, 1, -1, map[string]*string{"cleanup.policy": ptr("compact")}, o.CommitTopic); err != nil &&
		!strings.Contains(err.Error(), "TOPIC_ALREADY_EXISTS") {
		return kafkaMarker{}, kafkaErr(t, o, "create commit topic "+o.CommitTopic, err)
	}
	end, err := adm.ListCommittedOffsets(ctx, o.CommitTopic)
	if err != nil {
		return kafkaMarker{}, kafkaErr(t, o, "list offsets of "+o.CommitTopic, err)
	}
	stop, err := listed(end, o.CommitTopic, 0, 0)
	if err != nil || stop == 0 {
		return kafkaMarker{}, err
	}
	rd, err := kgo.NewClient(append(kafkaClientOpts(o), kgo.KeepControlRecords(),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{o.CommitTopic: {0: kgo.NewOffset().AtStart()}}))...)
	if err != nil {
		return kafkaMarker{}, err
	}
	defer rd.Close()
	var m kafkaMarker
	for next := int64(0); next < stop; {
		fs := rd.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return kafkaMarker{}, kafkaErr(t, o, "read commit markers from "+o.CommitTopic, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			next = max(next, r.Offset+1)
			if !r.Attrs.IsControl() && string(r.Key) == txnID {
				if got, err := decodeMarker(r.Value); err == nil {
					m = got
				}
			}
		})
	}
	return m, nil
}

func ptr[T any](v T) *T { return &v }
