package connector

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"clink/sql/types"
)

// jsonlReader reads one JSON object per line; fields are matched to
// columns by name (case-insensitively), a missing field or null is NULL.
// A flat object (the common case) is read by scanFlatJSON without
// encoding/json; any other line is decoded by encoding/json as before.
type jsonlReader struct {
	*lineReader
}

func openJSONL(t *Table, env Env) (rowReader, error) { return openJSONLBuf(t, env, 0) }

// openJSONLBuf opens a jsonl source with a read buffer of bufSize bytes.
func openJSONLBuf(t *Table, env Env, bufSize int) (rowReader, error) {
	lr, err := newLineReader(t, env, bufSize)
	if err != nil {
		return nil, err
	}
	if err := lr.start(); err != nil {
		_ = lr.close()
		return nil, err
	}
	return &jsonlReader{lr}, nil
}

func (r *jsonlReader) next() (types.Row, bool, bool, error) {
	if !r.due() {
		return nil, false, false, nil
	}
	for {
		line, n, st, err := r.line()
		if st != lineOK || err != nil {
			return nil, false, st == lineEnd, err
		}
		if isBlank(line) {
			continue
		}
		row, err := r.parse(string(line))
		if err == nil {
			return row, true, false, nil
		}
		if err := r.badRow(n, err); err != nil {
			return nil, false, false, err
		}
	}
}

// parse decodes one line (or an HTTP body: DecodeJSON).
func (r *jsonlReader) parse(line string) (types.Row, error) {
	fs, ok := scanFlatJSON(line, r.fields[:0])
	r.fields = fs
	if !ok {
		return r.parseJSON(line)
	}
	row := make(types.Row, len(r.t.Columns))
	for i, c := range r.t.Columns {
		f, ok := lookupField(fs, c.Name)
		if !ok || f.kind == 'z' {
			continue
		}
		if f.val == "" && f.kind == 's' && c.Type.Kind == types.KindVarchar {
			row[i] = types.NewVarchar("")
			continue
		}
		val, err := parseField(f.val, c.Type)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", c.Name, err)
		}
		row[i] = val
	}
	return row, nil
}

// lookupField finds a column's field as a decoded map would: the last
// member with exactly its name, else one whose name matches ignoring case.
func lookupField(fs []jsonField, name string) (jsonField, bool) {
	for i := len(fs) - 1; i >= 0; i-- {
		if fs[i].key == name {
			return fs[i], true
		}
	}
	for i := len(fs) - 1; i >= 0; i-- {
		if strings.EqualFold(fs[i].key, name) {
			return fs[i], true
		}
	}
	return jsonField{}, false
}

// parseJSON decodes a line with encoding/json: any JSON, nested values
// as their JSON text.
func (r *jsonlReader) parseJSON(line string) (types.Row, error) {
	dec := json.NewDecoder(strings.NewReader(line))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return nil, fmt.Errorf("bad JSON: %w", err)
	}
	if dec.InputOffset() < int64(len(strings.TrimRight(line, " \t\r\n"))) {
		return nil, fmt.Errorf("bad JSON: unexpected %q after the object", trailing(line, dec.InputOffset()))
	}
	row := make(types.Row, len(r.t.Columns))
	for i, c := range r.t.Columns {
		v, ok := lookupFold(obj, c.Name)
		if !ok || v == nil {
			continue
		}
		var s string
		switch x := v.(type) {
		case string:
			s = x
			if s == "" && c.Type.Kind == types.KindVarchar {
				row[i] = types.NewVarchar("")
				continue
			}
		case json.Number:
			s = x.String()
		case bool:
			s = fmt.Sprint(x)
		default:
			var b bytes.Buffer
			_ = json.NewEncoder(&b).Encode(x)
			s = strings.TrimSpace(b.String())
		}
		val, err := parseField(s, c.Type)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", c.Name, err)
		}
		row[i] = val
	}
	return row, nil
}

// trailing is what follows offset in line, shortened for a message.
func trailing(line string, offset int64) string {
	rest := strings.TrimSpace(line[offset:])
	if len(rest) > 20 {
		rest = rest[:20] + "..."
	}
	return rest
}

func lookupFold(obj map[string]any, name string) (any, bool) {
	if v, ok := obj[name]; ok {
		return v, true
	}
	for k, v := range obj {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return nil, false
}
