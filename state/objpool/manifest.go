package objpool

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"

	"clink/state"
	"clink/state/checksum"
)

// Object keys, relative to the store root. docs/object-layout.md is the
// reference; change both together.
const (
	currentKey = "CURRENT"
	// layoutVersion is the version this writer records in CURRENT and
	// manifests: 3 since every object is checksummed and names itself
	// (sealed JSON for CURRENT and manifests, run format 3, hot keys with a
	// checksum trailer). Readers accept every version from 1 on, so a pool
	// an older clink wrote stays readable (and writable: its old runs keep
	// their format until compacted).
	layoutVersion = 3
	maxAncestors  = 32
	hotKeysMagic  = "CLH3"
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
	// ManifestCRC (version 3) pins the manifest's checksum.
	ManifestCRC uint32 `json:"manifest_crc,omitempty"`
	// Ancestors (version 3) repeats the manifest's, so the checkpoints
	// before a damaged newest manifest stay restorable.
	Ancestors []ancestor `json:"ancestors,omitempty"`
}

// ancestor names an older checkpoint's manifest, so restore to it needs no
// LIST.
type ancestor struct {
	ID       state.CheckpointID `json:"id"`
	Manifest string             `json:"manifest"`
	CRC      uint32             `json:"crc,omitempty"` // version 3: the manifest's checksum
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
	crc uint32 // its checksum (version 3)
}

func emptyManifest(parts int) *manifest {
	return &manifest{Version: layoutVersion, Partitions: parts, Runs: make([][]RunRef, parts)}
}

// encodeManifest seals m (version 3) and records its checksum.
func encodeManifest(m *manifest) ([]byte, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	m.crc = checksum.CRC(b)
	return checksum.Seal(b), nil
}

// damaged is the error for object key whose bytes are not as written.
func damaged(key string, format string, args ...any) error {
	return fmt.Errorf("%s: %w: %s", key, errCorrupt, fmt.Sprintf(format, args...))
}

// unsealJSON decodes a sealed (version 3) or plain (older) JSON object
// into v and returns its checksum; version reads the decoded version.
func unsealJSON(key string, b []byte, v any, version func() int) (uint32, error) {
	body, sealed, err := checksum.Unseal(b)
	if err != nil {
		return 0, damaged(key, "%v", err)
	}
	if err := json.Unmarshal(body, v); err != nil {
		if !sealed && checksum.Cut(b) {
			return 0, damaged(key, "its checksum line is cut short or followed by extra bytes")
		}
		return 0, damaged(key, "%v", err)
	}
	if version() >= 3 && !sealed {
		return 0, damaged(key, "version %d without its checksum line (cut short or extended?)", version())
	}
	if !knownVersion(version()) {
		return 0, fmt.Errorf("%s: unsupported layout version %d (written by a newer clink?)", key, version())
	}
	if !sealed {
		return 0, nil
	}
	return checksum.CRC(body), nil
}

// decodeManifest decodes and verifies the manifest stored under key:
// its checksum, that it is the checkpoint its key and its referrer name
// (wantID, wantCRC: 0 when unknown) and that its runs are its own
// partitions'.
func decodeManifest(key string, b []byte, wantID state.CheckpointID, wantCRC uint32) (*manifest, error) {
	m := &manifest{}
	crc, err := unsealJSON(key, b, m, func() int { return m.Version })
	if err != nil {
		return nil, fmt.Errorf("manifest %w", err)
	}
	if m.Partitions <= 0 || len(m.Runs) != m.Partitions {
		return nil, fmt.Errorf("manifest %w", damaged(key, "%d partitions, %d run lists", m.Partitions, len(m.Runs)))
	}
	if id, ok := keyCheckpoint(key); !ok || id != m.Checkpoint || (wantID != 0 && m.Checkpoint != wantID) {
		return nil, fmt.Errorf("manifest %w", damaged(key, "it holds checkpoint %d", m.Checkpoint))
	}
	if wantCRC != 0 && crc != wantCRC {
		return nil, fmt.Errorf("manifest %w", damaged(key, "checksum %08x, its referrer recorded %08x", crc, wantCRC))
	}
	for p, runs := range m.Runs {
		for _, r := range runs {
			id, ok := keyCheckpoint(r.Key)
			if !strings.HasPrefix(r.Key, fmt.Sprintf("runs/%03d/", p)) || !ok || id > m.Checkpoint || r.Format > runFormat ||
				r.IndexOff < 0 || r.IndexLen < 0 || r.IndexOff+r.IndexLen+footerLen(r.format()) != r.Size {
				return nil, fmt.Errorf("manifest %w", damaged(key, "partition %d lists run %q (%d bytes, format %d)", p, r.Key, r.Size, r.Format))
			}
		}
	}
	m.key, m.crc = key, crc
	return m, nil
}

// knownVersion reports whether this reader understands layout version v.
func knownVersion(v int) bool { return v >= 1 && v <= layoutVersion }

func decodeCurrent(b []byte) (current, error) {
	var c current
	if _, err := unsealJSON(currentKey, b, &c, func() int { return c.Version }); err != nil {
		return c, err
	}
	if c.Checkpoint != 0 {
		if id, ok := keyCheckpoint(c.Manifest); !ok || id != c.Checkpoint || !strings.HasPrefix(c.Manifest, "manifests/") {
			return c, damaged(currentKey, "checkpoint %d names manifest %q", c.Checkpoint, c.Manifest)
		}
	}
	return c, nil
}

// encodeCurrent is CURRENT pointing at m (sealed, version 3).
func encodeCurrent(m *manifest) ([]byte, error) {
	b, err := json.Marshal(current{Version: layoutVersion, Checkpoint: m.Checkpoint, Manifest: m.key,
		ManifestCRC: m.crc, Ancestors: m.Ancestors})
	if err != nil {
		return nil, err
	}
	return checksum.Seal(b), nil
}

// findAncestor returns the ancestor entry for id if m lists it.
func (m *manifest) findAncestor(id state.CheckpointID) (ancestor, bool) {
	for _, a := range m.Ancestors {
		if a.ID == id {
			return a, true
		}
	}
	return ancestor{}, false
}

// childAncestors is the ancestor list a child of m carries: m first.
func (m *manifest) childAncestors() []ancestor {
	if m.Checkpoint == 0 {
		return nil
	}
	out := append([]ancestor{{ID: m.Checkpoint, Manifest: m.key, CRC: m.crc}}, m.Ancestors...)
	if len(out) > maxAncestors {
		// A contiguous window: a walk to an older checkpoint jumps to the
		// oldest listed one, whose own window continues the chain.
		out = out[:maxAncestors]
	}
	return out
}

// encodeKeys encodes the hot keys object key (version 3): its own key,
// the keys, the CRC-32C of all that and a magic.
func encodeKeys(key string, keys []state.Key) []byte {
	b := binary.AppendUvarint(nil, uint64(len(key)))
	b = append(b, key...)
	b = binary.AppendUvarint(b, uint64(len(keys)))
	for _, k := range keys {
		ik := ikey(k)
		b = binary.AppendUvarint(b, uint64(len(ik)))
		b = append(b, ik...)
	}
	b = binary.LittleEndian.AppendUint32(b, checksum.CRC(b))
	return append(b, hotKeysMagic...)
}

// decodeKeys decodes the hot keys object key, written with a manifest of
// the given layout version (before 3: no checksum, no identity).
func decodeKeys(key string, b []byte, version int) ([]state.Key, error) {
	if version >= 3 {
		if len(b) < 8 || string(b[len(b)-4:]) != hotKeysMagic {
			return nil, fmt.Errorf("%w: hot keys without their trailer", errCorrupt)
		}
		sum := binary.LittleEndian.Uint32(b[len(b)-8:])
		b = b[:len(b)-8]
		if got := checksum.CRC(b); got != sum {
			return nil, fmt.Errorf("%w: hot keys checksum %08x, recorded %08x", errCorrupt, got, sum)
		}
		l, k := binary.Uvarint(b)
		if k <= 0 || l > uint64(len(b)-k) || string(b[k:k+int(l)]) != key {
			return nil, fmt.Errorf("%w: the object holds another checkpoint's hot keys", errCorrupt)
		}
		b = b[k+int(l):]
	}
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
	if version >= 3 && len(b) != 0 {
		return nil, fmt.Errorf("%w: %d bytes after the hot keys", errCorrupt, len(b))
	}
	return keys, nil
}
