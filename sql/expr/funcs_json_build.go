package expr

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"clink/sql/ast"
	"clink/sql/types"
)

// jsonBuilders are Flink's JSON construction functions: JSON_OBJECT([KEY]
// k VALUE v, ... [NULL|ABSENT ON NULL]) and JSON_ARRAY(v, ... [NULL|ABSENT
// ON NULL]). They give VARCHAR JSON text, members and elements in the
// order written; a value built by another of them is nested as JSON, any
// other value is a JSON scalar (text a string). A NULL value is a JSON
// null under NULL ON NULL (JSON_OBJECT's default) and left out under
// ABSENT ON NULL (JSON_ARRAY's default); a NULL key is an error.
var jsonBuilders = map[string]bool{"JSON_OBJECT": true, "JSON_ARRAY": true}

func (c *Compiler) jsonBuild(e *ast.FuncCall) (*node, error) {
	if e.Distinct || e.Star || e.Filter != nil || len(e.OrderBy) > 0 {
		return nil, ast.Errorf(e.At, "DISTINCT, *, ORDER BY and FILTER apply only to aggregate functions, not %s", e.Name)
	}
	object := e.Name == "JSON_OBJECT"
	absent := e.OnNull == "ABSENT" || (e.OnNull == "" && !object)
	args := make([]*node, len(e.Args))
	nested := make([]bool, len(e.Args))
	for i, a := range e.Args {
		n, err := c.compile(a)
		if err != nil {
			return nil, err
		}
		if object && i%2 == 0 && n.typ.Kind != types.KindVarchar && !isNullType(n.typ) {
			return nil, ast.Errorf(a.Position(), "JSON_OBJECT key must be a VARCHAR, got %s", n.typ)
		}
		f, ok := a.(*ast.FuncCall)
		args[i], nested[i] = n, ok && jsonBuilders[f.Name]
	}
	return &node{typ: types.Varchar, eval: func(r types.Row) (types.Value, error) {
		b := []byte{'['}
		if object {
			b[0] = '{'
		}
		first := true
		for i := 0; i < len(args); i++ {
			var key types.Value
			if object {
				k, err := args[i].eval(r)
				if err != nil {
					return types.NullValue, err
				}
				if k.IsNull() {
					return types.NullValue, ast.Errorf(e.Args[i].Position(), "JSON_OBJECT: a key is NULL")
				}
				key, i = k, i+1
			}
			v, err := args[i].eval(r)
			if err != nil {
				return types.NullValue, err
			}
			if v.IsNull() && absent {
				continue
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			if object {
				b = appendJSONString(b, key.Str())
				b = append(b, ':')
			}
			if b, err = appendJSONScalar(b, v, nested[i]); err != nil {
				return types.NullValue, ast.Errorf(e.At, "%s: %v", e.Name, err)
			}
		}
		if object {
			return types.NewVarchar(string(append(b, '}'))), nil
		}
		return types.NewVarchar(string(append(b, ']'))), nil
	}}, nil
}

// appendJSONScalar appends v as JSON: raw when it is JSON text another
// construction function built, else by its kind.
func appendJSONScalar(b []byte, v types.Value, raw bool) ([]byte, error) {
	switch v.Kind() {
	case types.KindNull:
		return append(b, "null"...), nil
	case types.KindVarchar:
		if raw {
			return append(b, v.Str()...), nil
		}
		return appendJSONString(b, v.Str()), nil
	case types.KindBool:
		return strconv.AppendBool(b, v.Bool()), nil
	case types.KindInt, types.KindBigInt, types.KindDecimal:
		return v.AppendText(b), nil
	case types.KindDouble:
		f := v.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return b, fmt.Errorf("%v has no JSON number", f)
		}
		return strconv.AppendFloat(b, f, 'g', -1, 64), nil
	case types.KindArray:
		b = append(b, '[')
		for i, x := range v.Elems() {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendJSONScalar(b, x, false); err != nil {
				return b, err
			}
		}
		return append(b, ']'), nil
	}
	return appendJSONString(b, v.String()), nil // timestamps, intervals: their text
}

// appendJSONString appends s as a JSON string, without HTML escaping.
func appendJSONString(b []byte, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a Go string always encodes
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}
