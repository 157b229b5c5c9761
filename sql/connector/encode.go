package connector

import (
	"encoding/json"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"clink/sql/types"
)

// AppendJSONValue appends v as a JSON value without allocating: NULL as null,
// numbers as numbers (non-finite doubles as strings), the rest as strings
// escaped as encoding/json does.
func AppendJSONValue(b []byte, v types.Value) []byte {
	switch v.Kind() {
	case types.KindNull:
		return append(b, "null"...)
	case types.KindBool, types.KindInt, types.KindBigInt, types.KindDecimal:
		return v.AppendText(b)
	case types.KindDouble:
		if f := v.Float(); !math.IsInf(f, 0) && !math.IsNaN(f) {
			return v.AppendText(b)
		}
	case types.KindArray:
		b = append(b, '[')
		for i, e := range v.Elems() {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendJSONValue(b, e)
		}
		return append(b, ']')
	}
	start := len(b)
	b = append(b, '"')
	b = v.AppendText(b)
	for _, c := range b[start+1:] {
		if c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(string(b[start+1:]))
			return append(b[:start], q...)
		}
	}
	return append(b, '"')
}

// AppendCSVField appends f, quoted exactly when encoding/csv's Writer
// would quote it.
func AppendCSVField(b []byte, f string) []byte { return appendCSVField(b, f, ',') }

func appendCSVField(b []byte, f string, delim rune) []byte {
	if !csvNeedsQuotes(f, delim) {
		return append(b, f...)
	}
	b = append(b, '"')
	b = append(b, strings.ReplaceAll(f, `"`, `""`)...)
	return append(b, '"')
}

func csvNeedsQuotes(f string, delim rune) bool {
	if f == "" {
		return false
	}
	if f == `\.` || strings.ContainsAny(f, "\"\r\n") || strings.ContainsRune(f, delim) {
		return true
	}
	r, _ := utf8.DecodeRuneInString(f)
	return unicode.IsSpace(r)
}

// AppendCSVRow appends r as one CSV line (NULL as an empty field), with
// op first when it is not empty.
func AppendCSVRow(b []byte, op string, r types.Row) []byte {
	if op != "" {
		b = append(b, op...)
		b = append(b, ',')
	}
	for i, v := range r {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendCSVValue(b, v, ',')
	}
	return append(b, '\n')
}

// appendCSVValue appends one field: NULL empty, text quoted as needed.
func appendCSVValue(b []byte, v types.Value, delim rune) []byte {
	switch v.Kind() {
	case types.KindNull:
		return b
	case types.KindVarchar:
		return appendCSVField(b, v.Str(), delim)
	case types.KindArray:
		return appendCSVField(b, v.String(), delim)
	}
	return v.AppendText(b)
}

// AppendJSONRow appends r as one JSON object line, keys (JSON-encoded
// column names) in order and a missing value as null, with an "op" key
// first when op is not empty.
func AppendJSONRow(b []byte, keys [][]byte, op string, r types.Row) []byte {
	b = append(b, '{')
	if op != "" {
		b = append(b, `"op":"`...)
		b = append(b, op...)
		b = append(b, '"')
	}
	for i, k := range keys {
		if i > 0 || op != "" {
			b = append(b, ',')
		}
		b = append(b, k...)
		b = append(b, ':')
		if i < len(r) {
			b = AppendJSONValue(b, r[i])
		} else {
			b = append(b, "null"...)
		}
	}
	return append(b, "}\n"...)
}
