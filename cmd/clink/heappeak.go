package main

import (
	"bytes"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"sync"
	"time"
)

// heapPeakEvery is how often the heap watcher samples the live heap.
const heapPeakEvery = 50 * time.Millisecond

// heapPeak keeps the heap profile taken when the live heap was largest: a
// streaming job frees its state when it ends, so a profile written then
// shows almost nothing, while the peak is what sizes a machine.
type heapPeak struct {
	stopc chan struct{}
	wg    sync.WaitGroup
	peak  uint64
	prof  []byte
}

// watchHeapPeak starts sampling the live heap.
func watchHeapPeak() *heapPeak {
	h := &heapPeak{stopc: make(chan struct{})}
	h.wg.Go(h.watch)
	return h
}

func (h *heapPeak) watch() {
	t := time.NewTicker(heapPeakEvery)
	defer t.Stop()
	for {
		select {
		case <-h.stopc:
			return
		case <-t.C:
			h.sample()
		}
	}
}

// sample profiles the heap when the live heap (as of the last collection,
// which is also what the profile shows) grew a tenth past the peak.
func (h *heapPeak) sample() {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	if live := s[0].Value.Uint64(); h.prof == nil || live > h.peak+h.peak/10 {
		h.peak = live
		h.prof = heapProfile()
	}
}

// stop ends the watch and returns the peak's profile, or one taken now if
// the live heap never grew past its start.
func (h *heapPeak) stop() []byte {
	close(h.stopc)
	h.wg.Wait()
	runtime.GC()
	h.sample()
	return h.prof
}

// heapProfile is the heap profile as of the last collection.
func heapProfile() []byte {
	var b bytes.Buffer
	_ = pprof.Lookup("heap").WriteTo(&b, 0) // a bytes.Buffer does not fail
	return b.Bytes()
}
