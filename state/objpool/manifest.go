package objpool

import (
	"encoding/binary"
	"encoding/json"
	"fmt"

	"clink/state"
)

// Object keys, relative to the store root. docs/object-layout.md is the
// reference; change both together.
const (
	currentKey = "CURRENT"
	// layoutVersion is the version this writer records in CURRENT and
	// manifests: 2 since runs carry a block format (RunRef.Format). Readers
	// accept every version from 1 on, so a pool an older clink wrote stays
	// readable (and writable: its old runs keep format 1 until compacted).
	layoutVersion = 2
	maxAncestors  = 32
)

func manifestKey(id state.CheckpointID, token string) string {
	return fmt.Sprintf("manifests/%020d-%s.json", id, token)
}

func runKey(part int, id state.CheckpointID, token string) string {
	return fmt.Sprintf("runs/%03d/%020d-%s.run", part, id, token)
}

func hotKeysKey(id state.CheckpointID, token string) string {
	return fmt.Sprintf("hotkeys/%020d-%s.keys", id, token)
}

// current is the CURRENT pointer: the one mutable object, advanced with
// If-Match so exactly one writer wins each step.
type current struct {
	Version    int                `json:"version"`
	Checkpoint state.CheckpointID `json:"checkpoint"`
	Manifest   string             `json:"manifest"`
}

// ancestor names an older checkpoint's manifest, so restore to it needs no
// LIST.
type ancestor struct {
	ID       state.CheckpointID `json:"id"`
	Manifest string             `json:"manifest"`
}

// manifest is one checkpoint: per partition its runs, newest first.
type manifest struct {
	Version    int                `json:"version"`
	Checkpoint state.CheckpointID `json:"checkpoint"`
	Parent     state.CheckpointID `json:"parent"`
	Writer     string             `json:"writer"`
	Partitions int                `json:"partitions"`
	Runs       [][]RunRef         `json:"runs"`
	HotKeys    string             `json:"hot_keys,omitempty"`
	Ancestors  []ancestor         `json:"ancestors,omitempty"`

	key string // the object key it was read from (not serialised)
}

func emptyManifest(parts int) *manifest {
	return &manifest{Version: layoutVersion, Partitions: parts, Runs: make([][]RunRef, parts)}
}

func decodeManifest(key string, b []byte) (*manifest, error) {
	m := &manifest{}
	if err := json.Unmarshal(b, m); err != nil {
		return nil, fmt.Errorf("manifest %s: %w", key, err)
	}
	if !knownVersion(m.Version) || m.Partitions <= 0 || len(m.Runs) != m.Partitions {
		return nil, fmt.Errorf("manifest %s: unsupported version %d or bad partition count %d", key, m.Version, m.Partitions)
	}
	m.key = key
	return m, nil
}

// knownVersion reports whether this reader understands layout version v.
func knownVersion(v int) bool { return v >= 1 && v <= layoutVersion }

func decodeCurrent(b []byte) (current, error) {
	var c current
	if err := json.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("%s: %w", currentKey, err)
	}
	if !knownVersion(c.Version) || (c.Checkpoint != 0 && c.Manifest == "") {
		return c, fmt.Errorf("%s: unsupported version %d or missing manifest", currentKey, c.Version)
	}
	return c, nil
}

// findAncestor returns the manifest key for id if m lists it.
func (m *manifest) findAncestor(id state.CheckpointID) (string, bool) {
	for _, a := range m.Ancestors {
		if a.ID == id {
			return a.Manifest, true
		}
	}
	return "", false
}

// childAncestors is the ancestor list a child of m carries: m first.
func (m *manifest) childAncestors() []ancestor {
	if m.Checkpoint == 0 {
		return nil
	}
	out := append([]ancestor{{ID: m.Checkpoint, Manifest: m.key}}, m.Ancestors...)
	if len(out) > maxAncestors {
		// A contiguous window: a walk to an older checkpoint jumps to the
		// oldest listed one, whose own window continues the chain.
		out = out[:maxAncestors]
	}
	return out
}

func encodeKeys(keys []state.Key) []byte {
	b := binary.AppendUvarint(nil, uint64(len(keys)))
	for _, k := range keys {
		ik := ikey(k)
		b = binary.AppendUvarint(b, uint64(len(ik)))
		b = append(b, ik...)
	}
	return b
}

func decodeKeys(b []byte) ([]state.Key, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, fmt.Errorf("%w: bad hot-key count", errCorrupt)
	}
	b = b[k:]
	keys := make([]state.Key, 0, n)
	for i := uint64(0); i < n; i++ {
		l, k := binary.Uvarint(b)
		if k <= 0 || l < 4 || l > uint64(len(b)-k) {
			return nil, fmt.Errorf("%w: bad hot key %d", errCorrupt, i)
		}
		ik := b[k : k+int(l)]
		b = b[k+int(l):]
		keys = append(keys, state.Key{Op: state.OpID(binary.BigEndian.Uint32(ik)), Key: append([]byte(nil), ik[4:]...)})
	}
	return keys, nil
}
