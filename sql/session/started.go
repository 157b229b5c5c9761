package session

import "context"

type startedKey struct{}

// WithStarted returns a context under which Exec tells f the handle of
// each INSERT INTO ... SELECT once its job runs (before Exec waits for its
// end), so a caller that runs the INSERT on its own goroutine (clink
// serve's background jobs) can checkpoint, count and stop it.
func WithStarted(ctx context.Context, f func(*Handle)) context.Context {
	return context.WithValue(ctx, startedKey{}, f)
}

// notifyStarted calls the WithStarted hook of ctx, if any.
func notifyStarted(ctx context.Context, h *Handle) {
	if f, ok := ctx.Value(startedKey{}).(func(*Handle)); ok && f != nil {
		f(h)
	}
}
