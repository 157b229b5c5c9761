// Package metrics exports a running job's runtime counters in the
// Prometheus text format. It reads what the dashboard reads (the job's
// counter snapshot on every scrape, and the runtime event stream for the
// read-timing histograms) rather than keeping counters of its own, so the
// per-record path pays nothing for being scraped.
package metrics

import (
	"time"

	"clink/engine"
	"clink/engine/event"
	"clink/sql/connector"
	"clink/sql/session"
)

// Source is one running job as the metrics read it. Snapshot is called on
// every scrape and must be safe from any goroutine. A Source may also
// implement any of the optional interfaces below; the metrics they feed
// are left out when it does not.
type Source interface {
	Snapshot() engine.JobSnapshot
}

// EventSource gives the job's runtime event bus: the read-timing
// histograms are folded from its load events, timed by the backend (never
// the per-record kinds, so a hot-tier hit still costs nothing).
type EventSource interface {
	Bus() *event.Bus
}

// RejectSource counts input rows the job's sources skipped
// (on_error='skip').
type RejectSource interface {
	Rejects() int64
}

// ExprErrorSource counts row-level expression errors (rows that got NULL
// or were dropped instead of failing the query).
type ExprErrorSource interface {
	ExprErrorCount() int64
}

// KafkaLagSource gives the job's Kafka consumer lag per topic partition.
type KafkaLagSource interface {
	KafkaLag() []connector.PartitionLag
}

// EventTimeSource says whether watermarks are event times in Unix
// milliseconds, so the watermark and its lag behind the wall clock can be
// exported in seconds.
type EventTimeSource interface {
	EventTime() bool
}

// Handle adapts a SQL query's handle to a Source: the counters of its
// current job (none while it is crashed), the session's bus, its rejects
// and expression errors. Watermarks of SQL jobs are event times.
type Handle struct {
	H *session.Handle
	// EventBus is the session's bus (session.Config.Bus; nil: no
	// read-timing histograms).
	EventBus *event.Bus
}

// Snapshot reads the handle's current job.
func (s Handle) Snapshot() engine.JobSnapshot {
	if j := s.H.Job(); j != nil {
		return j.Snapshot()
	}
	return engine.JobSnapshot{}
}

// Bus is the session's event bus.
func (s Handle) Bus() *event.Bus { return s.EventBus }

// Rejects counts the rows the query's sources skipped.
func (s Handle) Rejects() int64 { return s.H.Rejects() }

// ExprErrorCount counts the query's row-level expression errors.
func (s Handle) ExprErrorCount() int64 { return s.H.ExprErrors().Count }

// EventTime is true: SQL watermarks are event times in Unix milliseconds.
func (s Handle) EventTime() bool { return true }

// KafkaLag is the query's consumer lag per topic partition.
func (s Handle) KafkaLag() []connector.PartitionLag { return s.H.KafkaLag() }

// Frozen is a finished job's last counters, so that its metrics stay at
// their final values after the job itself is gone.
type Frozen struct {
	Snap       engine.JobSnapshot
	RejectsN   int64
	ExprErrorN int64
	Events     bool // EventTime of the job it froze
	Lag        []connector.PartitionLag
}

// Freeze reads src once, with its optional counters.
func Freeze(src Source) Frozen {
	f := Frozen{Snap: src.Snapshot()}
	if r, ok := src.(RejectSource); ok {
		f.RejectsN = r.Rejects()
	}
	if e, ok := src.(ExprErrorSource); ok {
		f.ExprErrorN = e.ExprErrorCount()
	}
	if t, ok := src.(EventTimeSource); ok {
		f.Events = t.EventTime()
	}
	if l, ok := src.(KafkaLagSource); ok {
		f.Lag = l.KafkaLag()
	}
	return f
}

// Snapshot is the frozen snapshot.
func (f Frozen) Snapshot() engine.JobSnapshot { return f.Snap }

// Rejects is the frozen reject count.
func (f Frozen) Rejects() int64 { return f.RejectsN }

// ExprErrorCount is the frozen expression error count.
func (f Frozen) ExprErrorCount() int64 { return f.ExprErrorN }

// EventTime is the frozen job's.
func (f Frozen) EventTime() bool { return f.Events }

// KafkaLag is the frozen consumer lag.
func (f Frozen) KafkaLag() []connector.PartitionLag { return f.Lag }

// nowFunc is the wall clock of watermark lag (a test replaces it).
type nowFunc func() time.Time
