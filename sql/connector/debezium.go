package connector

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"clink/sql/ops"
	"clink/sql/types"
)

// FormatDebezium is the changelog format Flink calls debezium-json.
const FormatDebezium = "debezium-json"

// FormatCSV and FormatRaw are the kafka value formats besides json:
// one CSV record per message, or the whole value as one VARCHAR column.
const (
	FormatCSV = "csv"
	FormatRaw = "raw"
)

// Changelog reports whether a scan of t emits retractions because of its
// format or connector: format = 'debezium-json' (kafka, jsonl) or an
// upsert-kafka table. The planner marks such scans updating.
func Changelog(t *Table) bool {
	switch t.Connector {
	case "upsert-kafka":
		return true
	case "kafka", "jsonl":
		f, _ := t.Opt("format")
		return strings.EqualFold(strings.TrimSpace(f), FormatDebezium)
	}
	return false
}

// ChangelogDetail is EXPLAIN's note on a changelog scan's retractions.
func ChangelogDetail(t *Table) string {
	if t.Connector == "upsert-kafka" {
		return "updating: upsert-kafka, keyed by the PRIMARY KEY"
	}
	return "updating: debezium-json changelog"
}

// decodeDebezium decodes one Debezium JSON envelope, Flink's
// debezium-json: {"before":{...},"after":{...},"op":"c"|"r"|"u"|"d"},
// optionally inside {"schema":...,"payload":{...}}. The rows are phys's
// (the physical columns), decoded with the jsonl rules. c and r are +I
// after, u is -U before and +U after, d is -D before. It returns one or
// two changes.
func decodeDebezium(phys *Table, b []byte) ([]ops.Change, error) {
	env, err := debeziumEnvelope(b)
	if err != nil {
		return nil, err
	}
	var op string
	if raw, ok := env["op"]; !ok || json.Unmarshal(raw, &op) != nil {
		return nil, fmt.Errorf(`bad debezium-json envelope: no "op" string (want c, r, u or d)`)
	}
	row := func(field string) (types.Row, error) {
		raw := env[field]
		if len(raw) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			return nil, fmt.Errorf("bad debezium-json envelope: op %q without %q", op, field)
		}
		r, err := DecodeJSON(phys, raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", field, err)
		}
		return r, nil
	}
	switch op {
	case "c", "r":
		a, err := row("after")
		if err != nil {
			return nil, err
		}
		return []ops.Change{{Kind: ops.Insert, Row: a}}, nil
	case "u":
		bf, err := row("before")
		if err != nil {
			return nil, err
		}
		a, err := row("after")
		if err != nil {
			return nil, err
		}
		return []ops.Change{{Kind: ops.UpdateBefore, Row: bf}, {Kind: ops.UpdateAfter, Row: a}}, nil
	case "d":
		bf, err := row("before")
		if err != nil {
			return nil, err
		}
		return []ops.Change{{Kind: ops.Delete, Row: bf}}, nil
	}
	return nil, fmt.Errorf("bad debezium-json envelope: unknown op %q (want c, r, u or d)", op)
}

// debeziumEnvelope parses the envelope's members, unwrapping a payload.
func debeziumEnvelope(b []byte) (map[string]json.RawMessage, error) {
	var env map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&env); err != nil || env == nil {
		if err == nil {
			err = fmt.Errorf("not an object")
		}
		return nil, fmt.Errorf("bad JSON: %w", err)
	}
	if dec.InputOffset() < int64(len(bytes.TrimRight(b, " \t\r\n"))) {
		return nil, fmt.Errorf("bad JSON: unexpected %q after the object", trailing(string(b), dec.InputOffset()))
	}
	if p, ok := env["payload"]; ok {
		if _, has := env["op"]; !has {
			var inner map[string]json.RawMessage
			if err := json.Unmarshal(p, &inner); err != nil || inner == nil {
				return nil, fmt.Errorf(`bad debezium-json envelope: "payload" is not an object`)
			}
			env = inner
		}
	}
	return env, nil
}

// fileSinkFormat refuses writing a file table whose format is a
// changelog format: debezium-json files are read only.
func fileSinkFormat(t *Table) error {
	if Changelog(t) {
		return fmt.Errorf("table %s: writing format debezium-json to a file is not supported (it is read only; a jsonl table with format json writes a changelog with an op column, a kafka table writes debezium-json)", t.Name)
	}
	return nil
}
