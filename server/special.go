package server

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"clink/sql/types"
)

// ServerVersion is what clients are told the server is (server_version
// and version()): PostgreSQL 16's protocol and catalog subset.
const ServerVersion = "16.0"

// connState is one connection's PostgreSQL settings (SET / SHOW of
// client_encoding, DateStyle, application_name, ...), which only shape
// that connection's session; clink's own settings are the server's.
type connState struct {
	mu       sync.Mutex
	settings map[string]string
	pid      int32
}

// pgDefaults are the settings a connection starts with (and reports in
// ParameterStatus).
var pgDefaults = map[string]string{
	"server_version": ServerVersion, "server_encoding": "UTF8", "client_encoding": "UTF8",
	"datestyle": "ISO, MDY", "timezone": "UTC", "integer_datetimes": "on", "intervalstyle": "postgres",
	"standard_conforming_strings": "on", "application_name": "", "is_superuser": "off",
	"session_authorization": "clink", "search_path": "public", "transaction_isolation": "read committed",
	"default_transaction_isolation": "read committed", "transaction_read_only": "off",
	"extra_float_digits": "1", "statement_timeout": "0", "client_min_messages": "notice",
	"bytea_output": "hex", "lc_messages": "C", "max_identifier_length": "63", "in_hot_standby": "off",
}

func newConnState(pid int32) *connState {
	cs := &connState{settings: map[string]string{}, pid: pid}
	for k, v := range pgDefaults {
		cs.settings[k] = v
	}
	return cs
}

func (cs *connState) get(k string) (string, bool) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	v, ok := cs.settings[strings.ToLower(k)]
	return v, ok
}

func (cs *connState) set(k, v string) {
	cs.mu.Lock()
	cs.settings[strings.ToLower(k)] = v
	cs.mu.Unlock()
}

var (
	reShowJobs  = regexp.MustCompile(`(?is)^show\s+jobs$`)
	reCancelJob = regexp.MustCompile(`(?is)^cancel\s+job\s+(\S+)$`)
	reSubscribe = regexp.MustCompile(`(?is)^subscribe\s+(?:to\s+)?([A-Za-z_][A-Za-z0-9_]*)$`)
	reCopySub   = regexp.MustCompile(`(?is)^copy\s*\(\s*subscribe\s+(?:to\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*\)\s*to\s+stdout(?:\s+.*)?$`)
	reTxn       = regexp.MustCompile(`(?is)^(begin|start\s+transaction|commit|end|rollback|abort|discard\s+all|deallocate\s+.*|reset\s+all|close\s+all|unlisten\s+\*)(\s.*)?$`)
	reSetPG     = regexp.MustCompile(`(?is)^set\s+(?:session\s+|local\s+)?([A-Za-z_.]+)\s*(?:=|\s+to\s+)\s*(.*)$`)
	reSetTZ     = regexp.MustCompile(`(?is)^set\s+(?:session\s+)?time\s+zone\s+(.*)$`)
	reShowPG    = regexp.MustCompile(`(?is)^show\s+([A-Za-z_.]+|transaction\s+isolation\s+level)$`)
)

// special answers the statements the server handles itself: jobs,
// SUBSCRIBE, transactions (accepted and ignored: clink has none), the
// PostgreSQL settings and the catalog queries clients send.
func (c *core) special(ctx context.Context, cs *connState, text string) (*result, bool, error) {
	t := strings.TrimSpace(text)
	switch {
	case reShowJobs.MatchString(t):
		return c.showJobs(), true, nil
	case reCancelJob.MatchString(t):
		arg := reCancelJob.FindStringSubmatch(t)[1]
		id, err := strconv.Atoi(arg)
		if err != nil {
			return nil, true, fmt.Errorf("CANCEL JOB %s: want a job id (SHOW JOBS lists them)", arg)
		}
		r, err := c.cancelJob(id)
		return r, true, err
	case reSubscribe.MatchString(t):
		r, err := c.subscribe(ctx, reSubscribe.FindStringSubmatch(t)[1], false)
		return r, true, err
	case reCopySub.MatchString(t):
		r, err := c.subscribe(ctx, reCopySub.FindStringSubmatch(t)[1], true)
		return r, true, err
	case reTxn.MatchString(t):
		w := strings.ToUpper(strings.Fields(t)[0])
		if w == "END" || w == "ABORT" {
			w = map[string]string{"END": "COMMIT", "ABORT": "ROLLBACK"}[w]
		}
		return &result{Tag: w}, true, nil
	case reSetTZ.MatchString(t):
		cs.set("timezone", unquote(reSetTZ.FindStringSubmatch(t)[1]))
		return &result{Tag: "SET"}, true, nil
	}
	if m := reSetPG.FindStringSubmatch(t); m != nil {
		if _, ok := pgDefaults[strings.ToLower(m[1])]; ok {
			cs.set(m[1], unquote(m[2]))
			return &result{Tag: "SET"}, true, nil
		}
	}
	if m := reShowPG.FindStringSubmatch(t); m != nil {
		k := strings.ToLower(strings.Join(strings.Fields(m[1]), " "))
		if k == "transaction isolation level" {
			k = "transaction_isolation"
		}
		if v, ok := cs.get(k); ok {
			return oneValue(k, v), true, nil
		}
	}
	if isCatalogQuery(t) {
		r, err := c.catalogQuery(cs, t)
		return r, true, err
	}
	return nil, false, nil
}

// isSpecialRead reports whether a statement is one special answers with
// rows (so Describe may run it).
func isSpecialRead(text string) bool {
	t := strings.TrimSpace(text)
	return reShowJobs.MatchString(t) || reShowPG.MatchString(t) || isCatalogQuery(t) ||
		reSubscribe.MatchString(t) || reCopySub.MatchString(t)
}

// isSpecialCommand reports whether a statement is one special answers
// without rows (CANCEL JOB, transactions, PostgreSQL settings).
func isSpecialCommand(text string) bool {
	t := strings.TrimSpace(text)
	if reCancelJob.MatchString(t) || reTxn.MatchString(t) || reSetTZ.MatchString(t) {
		return true
	}
	if m := reSetPG.FindStringSubmatch(t); m != nil {
		_, ok := pgDefaults[strings.ToLower(m[1])]
		return ok
	}
	return false
}

// oneValue is a one-row, one-column text result.
func oneValue(name, v string) *result {
	return &result{Columns: textColumns(name), Rows: []types.Row{{types.NewVarchar(v)}}, Tag: "SHOW"}
}

// unquote strips a setting value's quotes.
func unquote(v string) string {
	v = strings.TrimSpace(v)
	if len(v) >= 2 && (v[0] == '\'' && v[len(v)-1] == '\'' || v[0] == '"' && v[len(v)-1] == '"') {
		return strings.ReplaceAll(v[1:len(v)-1], "''", "'")
	}
	return v
}

// subscribe starts a SUBSCRIBE to a materialised view.
func (c *core) subscribe(ctx context.Context, name string, copyOut bool) (*result, error) {
	c.mu.Lock()
	j := c.mvs[strings.ToLower(name)]
	c.mu.Unlock()
	if j == nil {
		return nil, fmt.Errorf("materialized view %s does not exist (SUBSCRIBE reads materialized views)", name)
	}
	s, err := j.subscribe(ctx)
	if err != nil {
		return nil, err
	}
	return &result{Sub: s, Copy: copyOut}, nil
}
