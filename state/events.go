package state

import (
	"fmt"
	"strconv"
	"time"

	"clink/engine/event"
)

// emitter labels the events of one backend. Callers check bus.Wants(kind)
// before building an event, so nothing is built when nobody listens.
type emitter struct {
	opts *Options
}

func (m emitter) emit(kind event.Kind, key string, n, mm int64, text string) {
	m.opts.Bus.Emit(event.Event{
		Kind: kind, Operator: m.opts.Name, Subtask: m.opts.Subtask,
		Key: key, N: n, M: mm, Text: text,
	})
}

// keyText renders a key for a trace: printable keys as they are, others
// quoted.
func keyText(op OpID, key []byte) string {
	s := string(key)
	if strconv.CanBackquote(s) && s != "" {
		return fmt.Sprintf("%d/%s", op, s)
	}
	return fmt.Sprintf("%d/%q", op, s)
}

func ckptText(id CheckpointID) string { return fmt.Sprintf("ckpt=%d", id) }

func (b *RemoteReadBackend) emitter() emitter { return emitter{&b.opts.Options} }

func (b *RemoteReadBackend) emitKey(kind event.Kind, op OpID, key []byte, n int64) {
	b.emitter().emit(kind, keyText(op, key), n, 0, "")
}

// readTiming times one load for its ReadDone event. A nil *readTiming
// (nobody listened for ReadDone when the load was issued) times nothing.
// The pool's answer writes rtt on the pool's goroutine before the load's
// completion is handed to the runner, which reads it in emitDone.
type readTiming struct {
	issued time.Time     // the load was issued on the runner
	rtt    time.Duration // request sent to the pool until its answer
}

// startTiming starts timing a load being issued now, or returns nil when
// nobody listens for ReadDone.
func (b *RemoteReadBackend) startTiming() *readTiming {
	if !b.opts.Bus.Wants(event.ReadDone) {
		return nil
	}
	return &readTiming{issued: b.opts.Now()}
}

// send notes the request going to the pool.
func (rt *readTiming) send(now func() time.Time) time.Time {
	if rt == nil {
		return time.Time{}
	}
	return now()
}

// answered notes the pool's answer to the request sent at sent.
func (rt *readTiming) answered(now func() time.Time, sent time.Time) {
	if rt != nil {
		rt.rtt = now().Sub(sent)
	}
}

// emitDone reports a finished load of n keys, on the runner once its
// values are written through, with its timing when rt measured it.
func (b *RemoteReadBackend) emitDone(n int, err error, rt *readTiming) {
	if !b.opts.Bus.Wants(event.ReadDone) {
		return
	}
	text := ""
	if err != nil {
		text = "error: " + err.Error()
	}
	e := event.Event{Kind: event.ReadDone, Operator: b.opts.Name, Subtask: b.opts.Subtask, N: int64(n), Text: text}
	if rt != nil {
		e.RoundTrip, e.Suspended = rt.rtt, b.opts.Now().Sub(rt.issued)
	}
	b.opts.Bus.Emit(e)
}
