package state

import (
	"fmt"
	"strconv"

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

// emitDone reports a finished load of n keys.
func (b *RemoteReadBackend) emitDone(n int, err error) {
	if !b.opts.Bus.Wants(event.ReadDone) {
		return
	}
	text := ""
	if err != nil {
		text = "error: " + err.Error()
	}
	b.emitter().emit(event.ReadDone, "", int64(n), 0, text)
}
