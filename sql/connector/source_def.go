package connector

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sort"
	"strings"
)

// A checkpointed source position carries the definition of the table it
// was read from, so a restore after the table was edited (another path,
// format or schema) is refused instead of resuming at an offset that
// means something else. Positions written before this envelope (no magic)
// still restore.
var defMagic = []byte{0xC1, 0x1D, 'F', 1}

// definition is the table's meaning for its saved positions, one
// "name: value" line per column, the watermark, the connector and each
// option; pacing options, which do not change what a position means, are
// left out.
func (t *Table) definition() string {
	var lines []string
	for i, c := range t.Columns {
		if m := t.metadataKey(i); m != "" {
			lines = append(lines, fmt.Sprintf("column %s: %s METADATA FROM '%s'", c.Name, c.Type, m))
			continue
		}
		lines = append(lines, fmt.Sprintf("column %s: %s", c.Name, c.Type))
	}
	for _, c := range t.Computed {
		lines = append(lines, fmt.Sprintf("computed %s (column %d): AS %s", c.Name, c.Index, c.Text))
	}
	if t.WatermarkText != "" {
		lines = append(lines, fmt.Sprintf("watermark: FOR %s AS %s", t.WatermarkColumn, t.WatermarkText))
	}
	lines = append(lines, "connector: "+t.Connector)
	var opts []string
	for k, v := range t.Options {
		if !pacingOption[k] {
			opts = append(opts, fmt.Sprintf("option %s: '%s'", k, v))
		}
	}
	sort.Strings(opts)
	return strings.Join(append(lines, opts...), "\n")
}

// pacingOption lists the options a restore may change freely: a kafka
// source's positions are per partition, so scan.parallelism may change
// too (the partitions are reassigned).
var pacingOption = map[string]bool{"rate": true, "connector": true, "scan.parallelism": true,
	"scan.topic-partition-discovery.interval": true}

// wrapPosition prefixes a reader's position with the table's definition.
func (t *Table) wrapPosition(pos []byte) []byte {
	def := t.definition()
	out := append(append([]byte{}, defMagic...), binary.AppendUvarint(nil, uint64(len(def)))...)
	return append(append(out, def...), pos...)
}

// unwrapPosition checks a saved position's definition against the table's
// and returns the reader's position.
func (t *Table) unwrapPosition(b []byte) ([]byte, error) {
	if !bytes.HasPrefix(b, defMagic) {
		return b, nil
	}
	rest := b[len(defMagic):]
	n, k := binary.Uvarint(rest)
	if k <= 0 || uint64(len(rest)-k) < n {
		return nil, fmt.Errorf("table %s: saved position is damaged", t.Name)
	}
	saved, pos := string(rest[k:k+int(n)]), rest[k+int(n):]
	if now := t.definition(); saved != now {
		return nil, fmt.Errorf("table %s changed since this checkpoint was taken (%s), so its saved position does not apply: "+
			"restore with the old definition, or start fresh without --restore", t.Name, defChanges(saved, now))
	}
	return pos, nil
}

// defChanges describes how two definitions differ, line by line.
func defChanges(was, now string) string {
	old, cur := defLines(was), defLines(now)
	var out []string
	for _, name := range sortedUnion(old, cur) {
		o, okO := old[name]
		c, okC := cur[name]
		switch {
		case !okO:
			out = append(out, fmt.Sprintf("%s added: %s", name, c))
		case !okC:
			out = append(out, fmt.Sprintf("%s removed (was %s)", name, o))
		case o != c:
			out = append(out, fmt.Sprintf("%s: %s -> %s", name, o, c))
		}
	}
	return strings.Join(out, "; ")
}

func defLines(def string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(def, "\n") {
		name, val, _ := strings.Cut(line, ": ")
		m[name] = val
	}
	return m
}

func sortedUnion(a, b map[string]string) []string {
	var names []string
	for k := range a {
		names = append(names, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	return names
}

// metadataKey is column i's METADATA key, "" for a physical column.
func (t *Table) metadataKey(i int) string {
	if i < len(t.Metadata) {
		return t.Metadata[i]
	}
	return ""
}
