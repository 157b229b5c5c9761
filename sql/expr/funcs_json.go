package expr

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/theory/jsonpath"

	"clink/sql/ast"
	"clink/sql/types"
)

// JSON is text: a VARCHAR holding a JSON document, as Flink's JSON
// functions take it. A document that does not parse gives NULL (Flink's
// default NULL ON ERROR); a path that does not parse is an error, at plan
// time when it is a constant.

func init() {
	register([]string{"JSON_VALUE"}, &builtin{2, 2, sig(types.Varchar, str), jsonValue, false})
	register([]string{"JSON_QUERY"}, &builtin{2, 2, sig(types.Varchar, str), jsonQuery, false})
	register([]string{"JSON_EXISTS"}, &builtin{2, 2, sig(types.Bool, str), jsonExists, false})
	for _, n := range []string{"JSON_VALUE", "JSON_QUERY", "JSON_EXISTS"} {
		argTyped[n] = jsonPathChecked(builtins[n].result)
	}
}

// jsonPathChecked type-checks a JSON function and parses a constant path,
// so a bad one is an error with the call's position.
func jsonPathChecked(result func([]types.Type) (types.Type, error)) func([]*node) (types.Type, error) {
	return func(args []*node) (types.Type, error) {
		ts := make([]types.Type, len(args))
		for i, a := range args {
			ts[i] = a.typ
		}
		t, err := result(ts)
		if err != nil {
			return t, err
		}
		if k := args[1].konst; k != nil && !k.IsNull() {
			if _, err := jsonPath(k.Str()); err != nil {
				return t, err
			}
		}
		return t, nil
	}
}

// jsonPaths caches parsed paths; it is cleared when full, so it stays
// bounded however many distinct paths a query computes.
var jsonPaths = struct {
	sync.Mutex
	m map[string]*jsonpath.Path
}{m: map[string]*jsonpath.Path{}}

const jsonPathCacheMax = 256

// jsonPath parses an SQL/JSON path: `$.a.b[0]` (RFC 9535 JSONPath), with an
// optional `lax` or `strict` mode word in front (both read as lax: a
// missing member is empty, not an error).
func jsonPath(p string) (*jsonpath.Path, error) {
	jsonPaths.Lock()
	defer jsonPaths.Unlock()
	if jp, ok := jsonPaths.m[p]; ok {
		return jp, nil
	}
	s := strings.TrimSpace(p)
	for _, mode := range []string{"lax ", "strict "} {
		if len(s) > len(mode) && strings.EqualFold(s[:len(mode)], mode) {
			s = strings.TrimSpace(s[len(mode):])
		}
	}
	jp, err := jsonpath.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("invalid JSON path %q: %v", p, err)
	}
	if len(jsonPaths.m) >= jsonPathCacheMax {
		clear(jsonPaths.m)
	}
	jsonPaths.m[p] = jp
	return jp, nil
}

// jsonSelect parses doc and selects path from it; ok is false when doc
// is not JSON.
func jsonSelect(doc, path string) (jsonpath.NodeList, bool, error) {
	jp, err := jsonPath(path)
	if err != nil {
		return nil, false, err
	}
	v, ok := parseJSON(doc)
	if !ok {
		return nil, false, nil
	}
	return jp.Select(v), true, nil
}

// parseJSON decodes one JSON document, keeping numbers as written.
func parseJSON(doc string) (any, bool) {
	d := json.NewDecoder(strings.NewReader(doc))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, false
	}
	if _, err := d.Token(); err != io.EOF { // trailing data
		return nil, false
	}
	return v, true
}

// jsonValue is JSON_VALUE: the one scalar the path selects, as text; NULL
// for none, several, an object or an array, or a JSON null.
func jsonValue(a []types.Value) (types.Value, error) {
	nodes, ok, err := jsonSelect(a[0].Str(), a[1].Str())
	if err != nil || !ok || len(nodes) != 1 {
		return types.NullValue, err
	}
	switch v := nodes[0].(type) {
	case string:
		return vc(v)
	case json.Number:
		return vc(v.String())
	case bool:
		return vc(fmt.Sprint(v))
	}
	return types.NullValue, nil
}

// jsonQuery is JSON_QUERY: the one object or array the path selects, as
// compact JSON text; NULL for none, several or a scalar (Flink's WITHOUT
// ARRAY WRAPPER with NULL ON EMPTY / ERROR).
func jsonQuery(a []types.Value) (types.Value, error) {
	nodes, ok, err := jsonSelect(a[0].Str(), a[1].Str())
	if err != nil || !ok || len(nodes) != 1 {
		return types.NullValue, err
	}
	switch nodes[0].(type) {
	case map[string]any, []any:
		return jsonText(nodes[0])
	}
	return types.NullValue, nil
}

// jsonExists is JSON_EXISTS: whether the path selects anything; FALSE for
// a document that is not JSON (Flink's FALSE ON ERROR).
func jsonExists(a []types.Value) (types.Value, error) {
	nodes, _, err := jsonSelect(a[0].Str(), a[1].Str())
	if err != nil {
		return types.NullValue, err
	}
	return types.NewBool(len(nodes) > 0), nil
}

// jsonText renders v as compact JSON text, without HTML escaping.
func jsonText(v any) (types.Value, error) {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return types.NullValue, err
	}
	return vc(strings.TrimSuffix(b.String(), "\n"))
}

// jsonArrow is PostgreSQL's -> (asText false) and ->> (true) on text
// holding JSON: an object's member by name, or an array's element by
// index (from 0; negative from the end). NULL when absent or not JSON;
// -> gives JSON text (a JSON null as null), ->> a string's contents or a
// scalar's text (a JSON null as NULL).
func jsonArrow(e *ast.Binary, l, r *node) (*node, error) {
	if err := str(l.typ); err != nil {
		return nil, ast.Errorf(e.At, "%s needs JSON text (VARCHAR) on its left, got %s", e.Op, l.typ)
	}
	if str(r.typ) != nil && intg(r.typ) != nil {
		return nil, ast.Errorf(e.At, "%s needs a member name (VARCHAR) or an index (integer) on its right, got %s", e.Op, r.typ)
	}
	asText := e.Op == "->>"
	return &node{typ: types.Varchar, eval: func(row types.Row) (types.Value, error) {
		doc, err := l.eval(row)
		if err != nil || doc.IsNull() {
			return types.NullValue, err
		}
		sel, err := r.eval(row)
		if err != nil || sel.IsNull() {
			return types.NullValue, err
		}
		v, ok := parseJSON(doc.Str())
		if !ok {
			return types.NullValue, nil
		}
		if v, ok = jsonStep(v, sel); !ok || (v == nil && asText) {
			return types.NullValue, nil // ->> of a JSON null is NULL, -> gives null
		}
		if s, isStr := v.(string); isStr && asText {
			return vc(s)
		}
		if n, isNum := v.(json.Number); isNum && asText {
			return vc(n.String())
		}
		return jsonText(v)
	}}, nil
}

// jsonStep is one -> step.
func jsonStep(v any, sel types.Value) (any, bool) {
	switch x := v.(type) {
	case map[string]any:
		if sel.Kind() != types.KindVarchar {
			return nil, false
		}
		m, ok := x[sel.Str()]
		return m, ok
	case []any:
		if sel.Kind() == types.KindVarchar {
			return nil, false
		}
		i := sel.Int()
		if i < 0 {
			i += int64(len(x))
		}
		if i < 0 || i >= int64(len(x)) {
			return nil, false
		}
		return x[i], true
	}
	return nil, false
}
