package tui

import (
	"fmt"
	"math"
	"sort"
	"time"

	"clink/engine"
	"clink/engine/event"
)

// histLen is how many ticks the sparklines remember.
const histLen = 120

// totals are job-wide sums of one snapshot's counters.
type totals struct {
	submitted, finished, parks, backpressure, releases int64
	inflight, parked, openEpoch, pendingEpochs         int64
	hits, misses, batches, evictions, loaded           int64
	hotBytes, hotMax, hotKeys, dirty, pinned, loading  int64
	watermark                                          int64
	async                                              int
}

func sum(s engine.JobSnapshot) totals {
	t := totals{watermark: math.MaxInt64}
	for _, st := range s.Subtasks {
		g, h := st.Gate, st.State
		if st.Async {
			t.submitted += g.Submitted
			t.finished += g.Finished
		} else { // a synchronous operator finishes what it takes
			t.submitted += st.Records
			t.finished += st.Records
		}
		t.parks += g.Parks
		t.backpressure += g.Backpressure
		t.releases += g.Releases
		t.inflight += g.InFlight
		t.parked += g.Parked
		t.openEpoch = max(t.openEpoch, g.OpenEpoch)
		t.pendingEpochs += g.PendingEpochs
		t.hits += h.Hits
		t.misses += h.Misses
		t.batches += h.Batches
		t.evictions += h.Evictions
		t.loaded += h.LoadedKeys
		t.hotBytes += h.HotBytes
		t.hotMax += h.HotMaxBytes
		t.hotKeys += int64(h.HotKeys)
		t.dirty += int64(h.Dirty)
		t.pinned += int64(h.Pinned)
		t.loading += int64(h.InFlight)
		if st.Watermark != math.MinInt64 {
			t.watermark = min(t.watermark, st.Watermark)
		}
		if st.Async {
			t.async++
		}
	}
	if t.watermark == math.MaxInt64 {
		t.watermark = math.MinInt64
	}
	return t
}

// rates are the per-second figures derived from consecutive snapshots.
type rates struct {
	in, out, parks, backpressure, releases, hits, misses, batches, evictions Rate
}

func (r *rates) observe(t totals, at time.Time) {
	r.in.Observe(t.submitted, at)
	r.out.Observe(t.finished, at)
	r.parks.Observe(t.parks, at)
	r.backpressure.Observe(t.backpressure, at)
	r.releases.Observe(t.releases, at)
	r.hits.Observe(t.hits, at)
	r.misses.Observe(t.misses, at)
	r.batches.Observe(t.batches, at)
	r.evictions.Observe(t.evictions, at)
}

// epochWait is a closed epoch not yet seen released.
type epochWait struct {
	sub      int
	epoch    uint64
	pending  int64
	closedAt time.Time
}

// metrics is everything the panels draw, folded from snapshots and events.
type metrics struct {
	info    Info
	snap    engine.JobSnapshot
	tot     totals
	at      time.Time
	r       rates
	subIn   []Rate
	inHist  *History
	outHist *History
	hitHist *History
	misHist *History
	rttHist *History // p50 of the pool's read round trip per tick
	susHist *History // p50 of the readers' suspension per tick
	evHist  *History

	park  *ParkDepths
	reads *ReadTimer
	// roundTrips are the newest pool round trips of cold reads (request
	// sent to the pool until its answer), suspended how long their readers
	// waited (read issued on the runner until the value was back on it,
	// the runner's queueing included).
	roundTrips, suspended samples
	batchHist             *History // sizes of recent batched reads

	waits    map[[2]uint64]epochWait // (subtask, epoch) → closed, waiting
	releases []string                // newest releases, newest last

	ckpts    map[uint64]engine.CheckpointInfo
	restores []string
	warmup   string

	log     []logLine
	logSeq  int64 // lines ever appended to log
	runFrom int64 // the first line of the current run of epoch events
	decode  func([]byte) (string, bool)
	results []string
	resCols []string   // the results' column names (ResultTable), nil without
	resRows [][]string // the results as cells, newest first (ResultTable)
	events  int64
}

func newMetrics() metrics {
	return metrics{
		inHist: NewHistory(histLen), outHist: NewHistory(histLen), hitHist: NewHistory(histLen),
		misHist: NewHistory(histLen), rttHist: NewHistory(histLen), susHist: NewHistory(histLen), evHist: NewHistory(histLen),
		park: NewParkDepths(), reads: NewReadTimer(), batchHist: NewHistory(64),
		waits: map[[2]uint64]epochWait{}, ckpts: map[uint64]engine.CheckpointInfo{},
	}
}

// sample folds one snapshot taken at at.
func (m *metrics) sample(s engine.JobSnapshot, at time.Time) {
	m.snap, m.at = s, at
	m.endRun()
	m.tot = sum(s)
	m.r.observe(m.tot, at)
	if len(m.subIn) != len(s.Subtasks) {
		m.subIn = make([]Rate, len(s.Subtasks))
	}
	for i, st := range s.Subtasks {
		m.subIn[i].Observe(st.Gate.Submitted, at)
		if st.Gate.Parked == 0 {
			m.park.Reset(st.Index)
		}
		for k, w := range m.waits {
			if int(k[0]) == st.Index && int64(w.epoch) < st.Gate.OpenEpoch-st.Gate.PendingEpochs {
				delete(m.waits, k) // released while the tap was detached
			}
		}
	}
	m.inHist.Push(m.r.in.PerSec)
	m.outHist.Push(m.r.out.PerSec)
	m.hitHist.Push(m.r.hits.PerSec)
	m.misHist.Push(m.r.misses.PerSec)
	m.evHist.Push(m.r.evictions.PerSec)
	m.rttHist.Push(float64(Percentile(m.roundTrips.s, 50)))
	m.susHist.Push(float64(Percentile(m.suspended.s, 50)))
	for _, c := range s.Checkpoints {
		m.ckpts[uint64(c.ID)] = c
	}
}

// maxSamples bounds each ring of read timings.
const maxSamples = 512

// samples is a ring of the newest maxSamples durations, in no order.
type samples struct {
	s    []time.Duration
	next int
}

func (r *samples) add(d time.Duration) {
	if len(r.s) < maxSamples {
		r.s = append(r.s, d)
		return
	}
	r.s[r.next] = d
	r.next = (r.next + 1) % maxSamples
}

// readDone folds a completed load's timings: the backend's own when it
// measured them, else (an older attach server) the miss → loaded time
// paired from the events, which is the readers' suspension.
func (m *metrics) readDone(e event.Event) {
	d, paired := m.reads.Done(e.Subtask, e.N, e.Time)
	if e.RoundTrip > 0 || e.Suspended > 0 {
		m.roundTrips.add(e.RoundTrip)
		m.suspended.add(e.Suspended)
		return
	}
	if paired {
		m.suspended.add(d)
	}
}

// onEvent folds one runtime event.
func (m *metrics) onEvent(e event.Event) {
	m.events++
	if stateKind(e.Kind) {
		e.Key = decodeKey(e.Key, m.decode)
	}
	e.Key = printable(e.Key)
	switch e.Kind {
	case event.RecordParked:
		m.park.Park(e.Subtask, e.Key, e.Time)
	case event.RecordPromoted:
		m.park.Promote(e.Subtask, e.Key)
	case event.ReadMiss:
		m.reads.Miss(e.Subtask, e.Time)
	case event.ReadBatch:
		m.reads.Batch(e.Subtask, e.N, e.Time)
		m.batchHist.Push(float64(e.N))
	case event.ReadDone:
		m.readDone(e)
	case event.EpochClosed:
		m.waits[[2]uint64{uint64(e.Subtask), e.Epoch}] = epochWait{sub: e.Subtask, epoch: e.Epoch, pending: e.N, closedAt: e.Time}
	case event.EpochReleased:
		k := [2]uint64{uint64(e.Subtask), e.Epoch}
		text := fmt.Sprintf("%s/%d e%d", e.Operator, e.Subtask, e.Epoch)
		if w, ok := m.waits[k]; ok {
			text += " after " + dur(e.Time.Sub(w.closedAt))
			delete(m.waits, k)
		}
		m.releases = appendCapped(m.releases, text, 8)
	case event.Restored:
		m.restores = appendCapped(m.restores, fmt.Sprintf("%s %s/%d %s", e.Time.Format("15:04:05"), e.Operator, e.Subtask, e.Text), 6)
	case event.WarmupProgress:
		m.warmup = fmt.Sprintf("%s/%d warmed %d/%d keys %s", e.Operator, e.Subtask, e.N, e.M, e.Text)
	}
	m.logEvent(e)
}

func appendCapped[T any](s []T, v T, n int) []T {
	s = append(s, v)
	if len(s) > n {
		s = append(s[:0], s[len(s)-n:]...)
	}
	return s
}

// openWaits returns the closed, unreleased epochs, oldest first.
func (m *metrics) openWaits() []epochWait {
	out := make([]epochWait, 0, len(m.waits))
	for _, w := range m.waits {
		out = append(out, w)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].sub != out[j].sub {
			return out[i].sub < out[j].sub
		}
		return out[i].epoch < out[j].epoch
	})
	return out
}
