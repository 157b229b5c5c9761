package connector

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// kafkaDiscovery finds partitions added to an unbounded source's topic
// while it runs: its goroutine lists the topic's partitions every
// scan.topic-partition-discovery.interval and hands a grown list to Next
// (discovered). The source's Close stops it and waits for it.
type kafkaDiscovery struct {
	grown  chan []int32
	cancel context.CancelFunc
	done   chan struct{}
}

// startDiscovery starts the discovery of an unbounded source (a bounded
// scan reads the topic as it was at the start), once.
func (s *kafkaSource) startDiscovery() error {
	if s.disc != nil || s.o.Bounded() || s.o.Discovery <= 0 {
		return nil
	}
	adm, err := kgo.NewClient(kafkaClientOpts(s.o)...)
	if err != nil {
		return fmt.Errorf("table %s: kafka client for partition discovery: %w", s.t.Name, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	d := &kafkaDiscovery{grown: make(chan []int32, 1), cancel: cancel, done: make(chan struct{})}
	s.disc = d
	t, o, known := s.t, s.o, len(s.topicParts)
	go func() {
		defer close(d.done)
		defer adm.Close()
		ka := kadm.NewClient(adm)
		tick := time.NewTicker(o.Discovery)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			lctx, lcancel := context.WithTimeout(ctx, o.ConnectTimeout)
			ids, err := topicPartitions(lctx, ka, t, o)
			lcancel()
			if err != nil || len(ids) <= known {
				continue // unreachable: the consumer waits out the outage; try again next time
			}
			known = len(ids)
			select {
			case <-d.grown: // replaced by the newer list
			default:
			}
			d.grown <- ids
		}
	}()
	return nil
}

// discovered adds the partitions the topic gained that this subtask owns
// (the assignment of a fresh start: partition i of the topic, in id
// order, to subtask i mod scan.parallelism), read from their first
// record. It never blocks.
func (s *kafkaSource) discovered() {
	if s.disc == nil {
		return
	}
	var ids []int32
	select {
	case ids = <-s.disc.grown:
	default:
		return
	}
	par, sub := max(s.env.Parallelism, 1), s.env.Subtask
	add := map[int32]kgo.Offset{}
	now := s.clock.Now()
	for i, id := range ids {
		if i%par != sub || s.byID[id] != nil {
			continue
		}
		kp := &kafkaPart{id: id, next: 0, stop: -1, wm: math.MinInt64, last: now, hwm: -1}
		s.parts = append(s.parts, kp)
		s.byID[id] = kp
		add[id] = kgo.NewOffset().At(0) // before the log start: reset to it
	}
	s.topicParts = ids
	if len(add) > 0 && s.cl != nil {
		s.cl.AddConsumePartitions(map[string]map[int32]kgo.Offset{s.o.Topic: add})
	}
}

// stopDiscovery stops the discovery goroutine and waits for it.
func (s *kafkaSource) stopDiscovery() {
	if s.disc != nil {
		s.disc.cancel()
		<-s.disc.done
		s.disc = nil
	}
}
