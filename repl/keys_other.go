//go:build !linux

package repl

import "context"

// TerminalKeys is not available on this platform: live keys are off and
// Ctrl-C still stops a query.
func TerminalKeys(int) func(ctx context.Context) (<-chan byte, func()) {
	return nil
}
