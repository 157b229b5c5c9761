package repl

import (
	"clink/state/stateuri"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Mode is how a streaming SELECT is shown.
type Mode string

// Result modes: the materialised table refreshed in place, the changelog
// as it streams, and append-only rows in a fixed-width grid.
const (
	ModeTable     Mode = "table"
	ModeChangelog Mode = "changelog"
	ModeAppend    Mode = "append"
)

// ParseMode checks a mode name.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(strings.ToLower(s)); m {
	case ModeTable, ModeChangelog, ModeAppend:
		return m, nil
	}
	return "", fmt.Errorf("unknown mode %q (want table, changelog or append)", s)
}

// Settings are the shell's knobs, shown by \set and changed by \set and
// \unset.
type Settings struct {
	StateURI    string
	Parallelism int
	MaxInFlight int
	Mode        Mode
	Timing      bool
	// Expanded is the expanded display (\x); "" is off.
	Expanded Expanded
	// Pager is when printed results are paged (\pager); "" is on.
	Pager Pager
	// Format is how results print (\pset format): "" or table is the
	// live views; csv, jsonl and changelog are `clink run`'s encoders.
	Format             Format
	CheckpointInterval time.Duration
	// Restore resumes queries from their checkpoints in a durable state
	// URI: "latest" or a checkpoint id ("": fresh); see docs/durability.md.
	Restore string
	// MaxOutage fails a checkpointing query (and bounds a Kafka
	// connector's wait for its broker) when no checkpoint completed for
	// this long; 0: never.
	MaxOutage time.Duration
}

// displaySetting reports whether SQL's SET name is one of the shell's
// display settings (SET pager = off works as \set pager off); other
// names go to the session.
func displaySetting(name string) bool {
	switch strings.ToLower(name) {
	case "mode", "timing", "expanded", "pager", "format":
		return true
	}
	return false
}

// setting describes one knob: its name, help and how to set and reset it.
type setting struct {
	name, help string
	get        func(*Settings) string
	set        func(*Settings, string) error
	reset      func(*Settings, Settings)
}

var settings = []setting{
	{"state", "state URI of keyed operators (memory://, disagg-local://?..., disagg-file://DIR, remote-read://BUCKET/PREFIX)",
		func(s *Settings) string { return RedactURI(s.StateURI) },
		func(s *Settings, v string) error { s.StateURI = v; return nil },
		func(s *Settings, d Settings) { s.StateURI = d.StateURI }},
	{"parallelism", "subtasks of each keyed operator",
		func(s *Settings) string { return strconv.Itoa(s.Parallelism) },
		func(s *Settings, v string) error { return positive(v, &s.Parallelism) },
		func(s *Settings, d Settings) { s.Parallelism = d.Parallelism }},
	{"in_flight", "cap on each async subtask's in-flight records (0: engine default)",
		func(s *Settings) string { return strconv.Itoa(s.MaxInFlight) },
		func(s *Settings, v string) error { return nonNegative(v, &s.MaxInFlight) },
		func(s *Settings, d Settings) { s.MaxInFlight = d.MaxInFlight }},
	{"hot_budget", "hot-tier bytes per backend (64MiB, 0 = unbounded); switches memory:// to disagg-local://",
		func(s *Settings) string { return uriParam(s.StateURI, "hot_max_bytes") },
		func(s *Settings, v string) error { return setURIParam(&s.StateURI, "hot_max_bytes", v) },
		func(s *Settings, _ Settings) { _ = setURIParam(&s.StateURI, "hot_max_bytes", "") }},
	{"latency", "simulated state read latency (1ms, uniform(0.5ms,2ms), exp(1ms)); disagg-local:// only",
		func(s *Settings) string { return uriParam(s.StateURI, "latency") },
		func(s *Settings, v string) error { return setURIParam(&s.StateURI, "latency", v) },
		func(s *Settings, _ Settings) { _ = setURIParam(&s.StateURI, "latency", "") }},
	{"mode", "how a SELECT is shown: table, changelog or append",
		func(s *Settings) string { return string(s.Mode) },
		func(s *Settings, v string) (err error) { s.Mode, err = ParseMode(v); return err },
		func(s *Settings, d Settings) { s.Mode = d.Mode }},
	{"checkpoint_interval", "checkpoint a live query this often (0: only on demand)",
		func(s *Settings) string { return s.CheckpointInterval.String() },
		func(s *Settings, v string) error { return duration(v, &s.CheckpointInterval) },
		func(s *Settings, d Settings) { s.CheckpointInterval = d.CheckpointInterval }},
	{"timing", "print how long each statement took (on/off)",
		func(s *Settings) string { return onOff(s.Timing) },
		func(s *Settings, v string) (err error) { s.Timing, err = parseOnOff(v); return err },
		func(s *Settings, d Settings) { s.Timing = d.Timing }},
	{"expanded", "expanded display, one line per column (on, off, or auto: when a table is wider than the terminal)",
		func(s *Settings) string { return string(orOff(s.Expanded)) },
		func(s *Settings, v string) (err error) { s.Expanded, err = parseExpanded(v); return err },
		func(s *Settings, d Settings) { s.Expanded = d.Expanded }},
	{"pager", "page printed results taller than the terminal through $PAGER (default less -S): on, off or always",
		func(s *Settings) string { return string(orOn(s.Pager)) },
		func(s *Settings, v string) (err error) { s.Pager, err = parsePager(v); return err },
		func(s *Settings, d Settings) { s.Pager = d.Pager }},
	{"format", "how results print: table (live views), or csv, jsonl, changelog as clink run --format (a SELECT then runs to its end)",
		func(s *Settings) string { return string(orTable(s.Format)) },
		func(s *Settings, v string) (err error) { s.Format, err = ParseFormat(v); return err },
		func(s *Settings, d Settings) { s.Format = d.Format }},
}

// orTable is f, or table when unset.
func orTable(f Format) Format {
	if f == "" {
		return FormatTable
	}
	return f
}

// orOn is p, or on when unset.
func orOn(p Pager) Pager {
	if p == "" {
		return PagerOn
	}
	return p
}

// orOff is e, or off when unset.
func orOff(e Expanded) Expanded {
	if e == "" {
		return ExpandedOff
	}
	return e
}

// settingAliases map other spellings to a setting's name.
var settingAliases = map[string]string{
	"state_uri": "state", "state.uri": "state", "max_in_flight": "in_flight", "inflight": "in_flight",
	"hot_max_bytes": "hot_budget", "checkpoint": "checkpoint_interval", "result_mode": "mode", "x": "expanded",
}

func settingNames() []string {
	var out []string
	for _, s := range settings {
		out = append(out, s.name)
	}
	return out
}

func findSetting(name string) (setting, error) {
	name = strings.ToLower(name)
	if a, ok := settingAliases[name]; ok {
		name = a
	}
	for _, s := range settings {
		if s.name == name {
			return s, nil
		}
	}
	return setting{}, fmt.Errorf("unknown setting %q (known: %s)", name, strings.Join(settingNames(), ", "))
}

// Show renders every setting and its value, secrets redacted.
func (s *Settings) Show() string {
	var b strings.Builder
	for _, st := range settings {
		fmt.Fprintf(&b, "%-20s %s\n", st.name, orDash(st.get(s)))
	}
	return b.String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func positive(v string, dst *int) error {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return fmt.Errorf("want a positive integer, got %q", v)
	}
	*dst = n
	return nil
}

func nonNegative(v string, dst *int) error {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return fmt.Errorf("want a non-negative integer, got %q", v)
	}
	*dst = n
	return nil
}

func duration(v string, dst *time.Duration) error {
	if v == "0" {
		*dst = 0
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return fmt.Errorf("want a duration such as 5s or 500ms, got %q", v)
	}
	*dst = d
	return nil
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func parseOnOff(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "on", "true", "1", "yes":
		return true, nil
	case "off", "false", "0", "no":
		return false, nil
	}
	return false, fmt.Errorf("want on or off, got %q", v)
}

// uriParam returns a query parameter of a state URI.
func uriParam(uri, key string) string {
	u, err := url.Parse(uri)
	if err != nil {
		return ""
	}
	return u.Query().Get(key)
}

// setURIParam sets (or, with v empty, removes) a query parameter of the
// state URI; memory:// becomes disagg-local:// since only the disaggregated
// tier has a hot budget and latency.
func setURIParam(uri *string, key, v string) error {
	u, err := url.Parse(*uri)
	if err != nil {
		return fmt.Errorf("state URI: %w", err)
	}
	if u.Scheme == "memory" {
		if v == "" {
			return nil
		}
		u = &url.URL{Scheme: "disagg-local", Host: ""}
	}
	q := u.Query()
	if v == "" {
		q.Del(key)
	} else {
		q.Set(key, v)
	}
	u.RawQuery = encodeQuery(q)
	*uri = u.String()
	if u.Host == "" && u.Path == "" && !strings.Contains(*uri, "://") {
		*uri = strings.Replace(*uri, ":", "://", 1)
	}
	return nil
}

// encodeQuery encodes q sorted by key, leaving ( ) , unescaped so values
// such as uniform(0.5ms,2ms) stay readable.
func encodeQuery(q url.Values) string {
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		for _, v := range q[k] {
			parts = append(parts, url.QueryEscape(k)+"="+readableEscape(v))
		}
	}
	return strings.Join(parts, "&")
}

func readableEscape(v string) string {
	r := strings.NewReplacer("%28", "(", "%29", ")", "%2C", ",")
	return r.Replace(url.QueryEscape(v))
}

// RedactURI hides credentials in a state URI (stateuri.Redact).
func RedactURI(uri string) string { return stateuri.Redact(uri) }
