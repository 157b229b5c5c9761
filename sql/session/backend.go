package session

import (
	"context"

	"clink/state"
)

// stateless is the backend of project/filter/union stages: they keep no
// state, so nothing is stored, captured or restored.
type stateless struct{}

func (stateless) Get(state.OpID, []byte) ([]byte, bool, error)       { return nil, false, nil }
func (stateless) Put(state.OpID, []byte, []byte) error               { return nil }
func (stateless) Delete(state.OpID, []byte) error                    { return nil }
func (stateless) Snapshot(context.Context, state.CheckpointID) error { return nil }
func (stateless) Restore(context.Context, state.CheckpointID) error  { return nil }
func (stateless) Close() error                                       { return nil }
