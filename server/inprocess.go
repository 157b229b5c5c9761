package server

import (
	"context"
	"errors"
	"fmt"

	"clink/sql/types"
)

// Query runs one statement in process, as a connection's simple-protocol
// query runs it (one statement, a trailing ';' allowed; the same path: special statements, then the parser, the
// view snapshots and the session), without the wire: no connection, no
// encoding of rows. It returns the result's column names and rows (none
// for a statement without rows). `clink bench serve` holds reads over the
// wire against it. SUBSCRIBE streams and is refused here.
func (s *Server) Query(ctx context.Context, text string) ([]string, []types.Row, error) {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return nil, nil, errors.New("serve: the server is closed")
	}
	text, err := oneStatement(text)
	if err != nil {
		return nil, nil, fmt.Errorf("serve: %w", err)
	}
	if text == "" {
		return nil, nil, errors.New("serve: no statement to run")
	}
	r, err := s.core.exec(ctx, newConnState(0), text)
	if err != nil {
		return nil, nil, fmt.Errorf("serve: %w", err)
	}
	if r.Sub != nil {
		r.Sub.close()
		return nil, nil, errors.New("serve: SUBSCRIBE streams its changes: read it over the wire (Server.Query runs statements that end)")
	}
	names := make([]string, len(r.Columns))
	for i, c := range r.Columns {
		names[i] = c.Name
	}
	return names, r.Rows, nil
}
