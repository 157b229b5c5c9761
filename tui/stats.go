package tui

import (
	"clink/engine/event"
	"slices"
	"sort"
	"time"
)

// Rate turns a growing counter into a per-second rate between two samples.
// A counter that goes backwards (a restored job starts its counters
// afresh) counts from zero.
type Rate struct {
	last  int64
	at    time.Time
	valid bool
	// PerSec is the rate over the last interval.
	PerSec float64
}

// Observe records the counter's value v at t and returns the rate since the
// previous observation (0 for the first).
func (r *Rate) Observe(v int64, t time.Time) float64 {
	if r.valid {
		dt := t.Sub(r.at).Seconds()
		d := v - r.last
		if d < 0 {
			d = v
		}
		if dt > 0 {
			r.PerSec = float64(d) / dt
		}
	}
	r.last, r.at, r.valid = v, t, true
	return r.PerSec
}

// Percentile returns the nearest-rank p-th percentile (0 < p <= 100) of
// samples, or 0 when there are none. samples is not modified.
func Percentile(samples []time.Duration, p float64) time.Duration {
	if len(samples) == 0 {
		return 0
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	rank := int(p/100*float64(len(s)) + 0.999999)
	rank = min(max(rank, 1), len(s))
	return s[rank-1]
}

// History is a fixed-size ring of the newest values, for sparklines.
type History struct {
	vals []float64
	next int
	full bool
}

// NewHistory holds up to n values.
func NewHistory(n int) *History { return &History{vals: make([]float64, max(n, 1))} }

// Push appends v, dropping the oldest value when full.
func (h *History) Push(v float64) {
	h.vals[h.next] = v
	h.next = (h.next + 1) % len(h.vals)
	if h.next == 0 {
		h.full = true
	}
}

// Values returns the values oldest first.
func (h *History) Values() []float64 {
	if !h.full {
		return slices.Clone(h.vals[:h.next])
	}
	return append(slices.Clone(h.vals[h.next:]), h.vals[:h.next]...)
}

// KeyDepth is one key's parked queue depth.
type KeyDepth struct {
	Subtask int
	Key     string
	Depth   int
}

type subKey struct {
	sub int
	key string
}

// ParkDepths tracks, from park and promote events, how many records wait
// behind each key's in-flight record. A promote with no park seen (the tap
// was detached) is ignored.
type ParkDepths struct {
	depth map[subKey]int
	peak  map[subKey]peak
}

type peak struct {
	depth int
	at    time.Time
}

// NewParkDepths returns an empty tracker.
func NewParkDepths() *ParkDepths {
	return &ParkDepths{depth: map[subKey]int{}, peak: map[subKey]peak{}}
}

// Park records one more record parked behind key on subtask sub at t.
func (p *ParkDepths) Park(sub int, key string, t time.Time) {
	k := subKey{sub, key}
	p.depth[k]++
	if d := p.depth[k]; d >= p.peak[k].depth || t.Sub(p.peak[k].at) > time.Second {
		p.peak[k] = peak{depth: d, at: t}
	}
}

// Peaks returns the n deepest queues seen since since, deepest first:
// parking is brief, so the panel shows recent peaks, not the instant.
func (p *ParkDepths) Peaks(since time.Time, n int) []KeyDepth {
	var out []KeyDepth
	for k, pk := range p.peak {
		if pk.at.Before(since) {
			delete(p.peak, k)
			continue
		}
		out = append(out, KeyDepth{Subtask: k.sub, Key: k.key, Depth: pk.depth})
	}
	return sortDepths(out, n)
}

// Promote records one parked record of key leaving the queue.
func (p *ParkDepths) Promote(sub int, key string) {
	k := subKey{sub, key}
	if p.depth[k] <= 1 {
		delete(p.depth, k)
		return
	}
	p.depth[k]--
}

// Reset forgets every queue (after a restore, or when the snapshot says a
// subtask has nothing parked).
func (p *ParkDepths) Reset(sub int) {
	for k := range p.depth {
		if sub < 0 || k.sub == sub {
			delete(p.depth, k)
		}
	}
}

// Total is the parked records on sub known from events.
func (p *ParkDepths) Total(sub int) int {
	n := 0
	for k, d := range p.depth {
		if k.sub == sub {
			n += d
		}
	}
	return n
}

// Top returns the n deepest queues, deepest first, ties by subtask and
// key; sub < 0 means every subtask.
func (p *ParkDepths) Top(sub, n int) []KeyDepth {
	var out []KeyDepth
	for k, d := range p.depth {
		if sub < 0 || k.sub == sub {
			out = append(out, KeyDepth{Subtask: k.sub, Key: k.key, Depth: d})
		}
	}
	return sortDepths(out, n)
}

func sortDepths(out []KeyDepth, n int) []KeyDepth {
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Depth != b.Depth {
			return a.Depth > b.Depth
		}
		if a.Subtask != b.Subtask {
			return a.Subtask < b.Subtask
		}
		return a.Key < b.Key
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// ReadTimer measures load latency from read events (event.ReadTimer):
// the dashboard and the metrics pair misses, batches and completions the
// same way.
type ReadTimer = event.ReadTimer

// NewReadTimer returns an empty timer.
func NewReadTimer() *ReadTimer { return event.NewReadTimer() }
