package connector

import (
	"slices"
	"strings"

	"clink/sql/expr"
)

// sourceOptions are the options every source table takes (event time).
var sourceOptions = []string{"connector", IdleTimeoutOption, "window.allowed-lateness"}

// fileOptions are what csv and jsonl tables read, as sources and sinks.
var fileOptions = []string{"path", "on_error", "rate", "format", MonitorIntervalOption, MaxLineBytesOption}

// connectorOptions lists each connector's option keys; datagen's per-column
// options are "fields.<column>.<key>". A key no connector reads is refused
// at CREATE TABLE: a mistyped or foreign option must not be ignored
// silently.
var connectorOptions = map[string][]string{
	"values":  {"bounded", "append-only"},
	"nexmark": {"table", "nexmark.table", "events", "events_per_second", "rate", "seed"},
	"datagen": {"rows", "seed"},
	"csv":     append([]string{"header", "delimiter"}, fileOptions...),
	"jsonl":   fileOptions,
}

// datagenFieldKeys are the per-column datagen options.
var datagenFieldKeys = []string{"kind", "min", "max", "step", "null_rate", "length"}

// fileFormats is what the format option may say per file connector (the
// connector already names the format; Flink's spelling is accepted).
var fileFormats = map[string][]string{"csv": {"csv"}, "jsonl": {"json", "jsonl", FormatDebezium}}

// CheckOptions refuses options the table's connector does not read, and
// a file table's format other than its own. Connectors that check their
// own options (http) or are not listed pass.
func CheckOptions(t *Table) error {
	known, ok := connectorOptions[t.Connector]
	if !ok {
		return nil
	}
	known = append(slices.Clone(sourceOptions), known...)
	for k := range t.Options {
		if slices.Contains(known, k) || (t.Connector == "datagen" && datagenField(t, k)) {
			continue
		}
		hint := strings.Join(known[1:], ", ")
		if t.Connector == "datagen" {
			hint += ", fields.<column>.{" + strings.Join(datagenFieldKeys, ",") + "}"
		}
		return t.OptErr(k, "unknown option for connector %s (known: %s)", t.Connector, hint)
	}
	if f, ok := t.Opt("format"); ok && fileFormats[t.Connector] != nil &&
		!slices.Contains(fileFormats[t.Connector], strings.ToLower(strings.TrimSpace(f))) {
		return t.OptErr("format", "a %s table reads %s; format %q is not supported",
			t.Connector, fileFormats[t.Connector][0], f)
	}
	return nil
}

// datagenField reports whether k is fields.<a column of t>.<a field key>.
func datagenField(t *Table, k string) bool {
	rest, ok := strings.CutPrefix(k, "fields.")
	if !ok {
		return false
	}
	i := strings.LastIndexByte(rest, '.')
	if i < 0 || !slices.Contains(datagenFieldKeys, rest[i+1:]) {
		return false
	}
	return slices.ContainsFunc(t.Columns, func(c expr.Column) bool { return strings.EqualFold(c.Name, rest[:i]) })
}

// OptionNames are the WITH (...) keys a table of connector takes, sorted
// (the REPL completes them); every connector's when it is unknown or "".
func OptionNames(connector string) []string {
	var keys []string
	add := func(name string) {
		switch name {
		case "kafka", "upsert-kafka":
			for k := range kafkaKnown {
				keys = append(keys, k)
			}
		case "http":
			keys = append(keys, httpOptions...)
		default:
			keys = append(keys, connectorOptions[name]...)
		}
	}
	if slices.Contains(ConnectorNames(), connector) {
		add(connector)
	} else {
		for _, c := range ConnectorNames() {
			add(c)
		}
	}
	keys = append(keys, sourceOptions...)
	slices.Sort(keys)
	return slices.Compact(keys)
}

// ConnectorNames are the connectors CREATE TABLE knows, sorted.
func ConnectorNames() []string {
	names := []string{"kafka", "upsert-kafka", "http"}
	for c := range connectorOptions {
		names = append(names, c)
	}
	slices.Sort(names)
	return names
}
