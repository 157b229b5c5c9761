package tui

import "clink/sql/types"

// DecodeSQLKey decodes a SQL state key (the order-preserving key
// encoding of sql/types) into its values, tab-separated as the gate
// events' keys are; ok is false for bytes that are not such a key.
func DecodeSQLKey(key []byte) (string, bool) {
	r, err := types.DecodeKey(key, nil)
	if err != nil || len(r) == 0 {
		return "", false
	}
	return r.String(), true
}

// DecodeKey renders a state key of the query as its values (KeyDecoder).
func (r *SQLRuntime) DecodeKey(key []byte) (string, bool) { return DecodeSQLKey(key) }

var (
	_ KeyDecoder  = (*SQLRuntime)(nil)
	_ ResultTable = (*SQLRuntime)(nil)
)
