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
type jsonlReader struct {
	*lineReader
}

func openJSONL(t *Table, env Env) (rowReader, error) {
	lr, err := newLineReader(t, env)
	if err != nil {
		return nil, err
	}
	return &jsonlReader{lr}, nil
}

func (r *jsonlReader) next() (types.Row, bool, bool, error) {
	for {
		line, n, ok := r.line()
		if !ok {
			return nil, false, true, nil
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		row, err := r.parse(line)
		if err == nil {
			return row, true, false, nil
		}
		if err := r.badRow(n, err); err != nil {
			return nil, false, false, err
		}
	}
}

func (r *jsonlReader) parse(line string) (types.Row, error) {
	dec := json.NewDecoder(strings.NewReader(line))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return nil, fmt.Errorf("bad JSON: %w", err)
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
