package connector

import "unicode/utf8"

// jsonField is one member of a flat JSON object as scanFlatJSON finds
// it: the key, and the value's text (a string's contents, a number's
// literal, "true" or "false") and kind: 's' string, 'n' number, 'b'
// boolean, 'z' null.
type jsonField struct {
	key, val string
	kind     byte
}

// scanFlatJSON reads the object a line starts with when it is flat: its
// keys and string values have no escapes, control characters or invalid
// UTF-8, and its values are strings, numbers, booleans or null. Anything
// else reports !ok, and the line goes through encoding/json instead; the
// fast path reads exactly what a json.Decoder would. Anything but white
// space after the object also reports !ok, so that parseJSON rejects the
// line. Fields are appended to fs.
func scanFlatJSON(s string, fs []jsonField) ([]jsonField, bool) {
	i := skipWS(s, 0)
	if i >= len(s) || s[i] != '{' {
		return fs, false
	}
	i = skipWS(s, i+1)
	if i < len(s) && s[i] == '}' {
		return fs, skipWS(s, i+1) == len(s)
	}
	for {
		key, j, ok := scanString(s, i)
		if !ok {
			return fs, false
		}
		j = skipWS(s, j)
		if j >= len(s) || s[j] != ':' {
			return fs, false
		}
		f := jsonField{key: key}
		if f.val, f.kind, j, ok = scanValue(s, skipWS(s, j+1)); !ok {
			return fs, false
		}
		fs = append(fs, f)
		j = skipWS(s, j)
		if j >= len(s) {
			return fs, false
		}
		switch s[j] {
		case '}':
			return fs, skipWS(s, j+1) == len(s)
		case ',':
			i = skipWS(s, j+1)
		default:
			return fs, false
		}
	}
}

func skipWS(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// scanString reads a string without escapes at s[i]: its contents and the
// index after its closing quote.
func scanString(s string, i int) (string, int, bool) {
	if i >= len(s) || s[i] != '"' {
		return "", 0, false
	}
	ascii := true
	for j := i + 1; j < len(s); j++ {
		switch c := s[j]; {
		case c == '"':
			v := s[i+1 : j]
			if !ascii && !utf8.ValidString(v) {
				return "", 0, false // encoding/json replaces bad bytes
			}
			return v, j + 1, true
		case c == '\\' || c < 0x20:
			return "", 0, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return "", 0, false
}

// scanValue reads a scalar value at s[i].
func scanValue(s string, i int) (val string, kind byte, end int, ok bool) {
	if i >= len(s) {
		return "", 0, 0, false
	}
	switch c := s[i]; {
	case c == '"':
		v, j, ok := scanString(s, i)
		return v, 's', j, ok
	case c == 't':
		return literal(s, i, "true", 'b')
	case c == 'f':
		return literal(s, i, "false", 'b')
	case c == 'n':
		return literal(s, i, "null", 'z')
	case c == '-' || c >= '0' && c <= '9':
		j, ok := scanNumber(s, i)
		return s[i:j], 'n', j, ok
	}
	return "", 0, 0, false
}

func literal(s string, i int, lit string, kind byte) (string, byte, int, bool) {
	if len(s)-i < len(lit) || s[i:i+len(lit)] != lit {
		return "", 0, 0, false
	}
	return lit, kind, i + len(lit), true
}

// scanNumber reads a JSON number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func scanNumber(s string, i int) (int, bool) {
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		i = digits(s, i)
	default:
		return i, false
	}
	if i < len(s) && s[i] == '.' {
		j := digits(s, i+1)
		if j == i+1 {
			return i, false
		}
		i = j
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := digits(s, i)
		if j == i {
			return i, false
		}
		i = j
	}
	return i, true
}

func digits(s string, i int) int {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}
