package types

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Arrays. An ARRAY value holds its elements' row encoding (AppendRow) in
// its string payload: Value stays a small immutable struct, the value
// encoding of an array is that string with a length (so state, checkpoints
// and sinks carry arrays like any value) and equal arrays of one element
// type encode alike. Elements may be NULL; arrays do not nest.

// ArrayOf returns the type ARRAY<elem>; a nested array is an error.
func ArrayOf(elem Type) (Type, error) {
	if elem.Kind == KindArray {
		return Type{}, errors.New("arrays of arrays are not supported")
	}
	return Type{Kind: KindArray, Elem: elem.Kind, Precision: elem.Precision, Scale: elem.Scale}, nil
}

// ElemType is an ARRAY type's element type (Null for other types).
func (t Type) ElemType() Type {
	if t.Kind != KindArray {
		return Null
	}
	return Type{Kind: t.Elem, Precision: t.Precision, Scale: t.Scale}
}

// NewArray returns an ARRAY value of the given elements.
func NewArray(elems []Value) Value {
	return Value{kind: KindArray, s: string(AppendRow(nil, elems))}
}

// Elems returns an ARRAY's elements (nil for other values). Arrays are
// built by NewArray or checked when decoded, so they always decode.
func (v Value) Elems() Row {
	if v.kind != KindArray {
		return nil
	}
	r, err := DecodeRow([]byte(v.s))
	if err != nil {
		return nil
	}
	return r
}

// Cardinality is an ARRAY's number of elements.
func (v Value) Cardinality() int64 {
	n, k := binary.Uvarint([]byte(v.s))
	if v.kind != KindArray || k <= 0 {
		return 0
	}
	return int64(n)
}

// formatArray renders an array as PostgreSQL does: {1,2,NULL,"a b"}.
func formatArray(v Value) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, e := range v.Elems() {
		if i > 0 {
			b.WriteByte(',')
		}
		if e.IsNull() {
			b.WriteString("NULL")
			continue
		}
		writeArrayElem(&b, e.String())
	}
	b.WriteByte('}')
	return b.String()
}

// writeArrayElem writes one element, double-quoted where PostgreSQL
// quotes it (empty, NULL, or holding braces, quotes, commas, backslashes
// or white space).
func writeArrayElem(b *strings.Builder, s string) {
	if s != "" && !strings.EqualFold(s, "NULL") && !strings.ContainsAny(s, "{}\",\\ \t\n\r\v\f") {
		b.WriteString(s)
		return
	}
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' || s[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('"')
}

// compareArrays orders arrays element by element (CompareTotal: NULL
// elements equal and first, as PostgreSQL's array comparison), a prefix
// first.
func compareArrays(a, b Value) int {
	if a.s == b.s {
		return 0
	}
	ea, eb := a.Elems(), b.Elems()
	for i := 0; i < len(ea) && i < len(eb); i++ {
		if c := CompareTotal(ea[i], eb[i]); c != 0 {
			return c
		}
	}
	return len(ea) - len(eb)
}

// appendKeyArray is the key encoding of an array: per element 0x01 and
// its key encoding, then 0x00 (a prefix sorts first).
func appendKeyArray(buf []byte, v Value) []byte {
	buf = append(buf, tagArray)
	for _, e := range v.Elems() {
		buf = AppendKey(append(buf, 0x01), e)
	}
	return append(buf, 0x00)
}

func readKeyArray(buf []byte) (Value, []byte, error) {
	var elems []Value
	for {
		if len(buf) == 0 {
			return NullValue, nil, ErrCorrupt
		}
		switch buf[0] {
		case 0x00:
			return NewArray(elems), buf[1:], nil
		case 0x01:
		default:
			return NullValue, nil, ErrCorrupt
		}
		if len(buf) < 2 || buf[1] == tagArray {
			return NullValue, nil, ErrCorrupt
		}
		e, rest, err := readKey(buf[1:])
		if err != nil {
			return NullValue, nil, err
		}
		elems, buf = append(elems, e), rest
	}
}

// arrayFromKeyType gives a key-decoded array's elements their type.
func arrayFromKeyType(v Value, t Type) (Value, error) {
	elems := v.Elems()
	for i, e := range elems {
		if e.IsNull() {
			continue
		}
		var err error
		if elems[i], err = fromKeyType(e, t.ElemType()); err != nil {
			return NullValue, err
		}
	}
	return NewArray(elems), nil
}

// castArray converts an array element by element, or parses
// PostgreSQL's text form ('{1,2,NULL}') or a JSON array ('[1,2,null]',
// as jsonl files hold arrays).
func castArray(v Value, t Type) (Value, error) {
	var elems Row
	switch v.kind {
	case KindArray:
		elems = v.Elems()
	case KindVarchar:
		parse := parseArrayText
		if strings.HasPrefix(strings.TrimSpace(v.s), "[") {
			parse = parseJSONArray
		}
		var err error
		if elems, err = parse(v.s); err != nil {
			return NullValue, err
		}
	default:
		return NullValue, fmt.Errorf("cannot cast %s to %s", v.kind.name(), t)
	}
	out := make(Row, len(elems))
	for i, e := range elems {
		c, err := Cast(e, t.ElemType())
		if err != nil {
			return NullValue, fmt.Errorf("cast to %s: element %d: %w", t, i+1, err)
		}
		out[i] = c
	}
	return NewArray(out), nil
}

// parseArrayText parses '{a,"b c",NULL}' into VARCHAR elements (NULL for
// an unquoted NULL).
func parseArrayText(s string) (Row, error) {
	bad := func(why string) (Row, error) { return nil, fmt.Errorf("invalid array literal %q: %s", s, why) }
	t := strings.TrimSpace(s)
	if len(t) < 2 || t[0] != '{' || t[len(t)-1] != '}' {
		return bad(`want {elem,elem,...}`)
	}
	t = t[1 : len(t)-1]
	var out Row
	if strings.TrimSpace(t) == "" {
		return Row{}, nil
	}
	for {
		t = strings.TrimLeft(t, " \t\n\r")
		var elem Value
		if strings.HasPrefix(t, `"`) {
			var b strings.Builder
			i := 1
			for ; i < len(t) && t[i] != '"'; i++ {
				if t[i] == '\\' && i+1 < len(t) {
					i++
				}
				b.WriteByte(t[i])
			}
			if i >= len(t) {
				return bad("unterminated quoted element")
			}
			elem, t = NewVarchar(b.String()), strings.TrimLeft(t[i+1:], " \t\n\r")
		} else {
			end := strings.IndexByte(t, ',')
			if end < 0 {
				end = len(t)
			}
			raw := strings.TrimSpace(t[:end])
			if raw == "" || strings.ContainsAny(raw, `{}"\`) {
				return bad("want an element (nested arrays are not supported)")
			}
			elem, t = NewVarchar(raw), t[end:]
			if strings.EqualFold(raw, "NULL") {
				elem = NullValue
			}
		}
		out = append(out, elem)
		if t == "" {
			return out, nil
		}
		if t[0] != ',' {
			return bad("want , between elements")
		}
		t = t[1:]
	}
}

// parseJSONArray parses a JSON array of scalars into VARCHAR elements
// (NULL for null).
func parseJSONArray(s string) (Row, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var xs []any
	if err := dec.Decode(&xs); err != nil {
		return nil, fmt.Errorf("invalid JSON array %q: %w", s, err)
	}
	out := make(Row, len(xs))
	for i, x := range xs {
		switch x := x.(type) {
		case nil:
		case string:
			out[i] = NewVarchar(x)
		case json.Number:
			out[i] = NewVarchar(x.String())
		case bool:
			out[i] = NewVarchar(strconv.FormatBool(x))
		default:
			return nil, fmt.Errorf("invalid array %q: element %d is not a scalar (nested arrays are not supported)", s, i+1)
		}
	}
	return out, nil
}
