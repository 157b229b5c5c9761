package server

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"clink/sql/types"
)

// PostgreSQL type OIDs of clink's types.
const (
	oidBool      = 16
	oidInt8      = 20
	oidInt2      = 21
	oidInt4      = 23
	oidText      = 25
	oidFloat4    = 700
	oidFloat8    = 701
	oidUnknown   = 705
	oidVarchar   = 1043
	oidTimestamp = 1114
	oidInterval  = 1186
	oidNumeric   = 1700
)

// arrayOIDs maps an element's OID to its array type's OID.
var arrayOIDs = map[uint32]uint32{oidBool: 1000, oidInt4: 1007, oidInt8: 1016, oidFloat8: 1022,
	oidVarchar: 1015, oidTimestamp: 1115, oidInterval: 1187, oidNumeric: 1231}

// pgType is the OID and byte size (-1: variable) of a clink type.
func pgType(t types.Type) (oid uint32, size int16) {
	switch t.Kind {
	case types.KindArray:
		elem, _ := pgType(t.ElemType())
		return arrayOIDs[elem], -1
	case types.KindBool:
		return oidBool, 1
	case types.KindInt:
		return oidInt4, 4
	case types.KindBigInt:
		return oidInt8, 8
	case types.KindDouble:
		return oidFloat8, 8
	case types.KindDecimal:
		return oidNumeric, -1
	case types.KindTimestamp:
		return oidTimestamp, 8
	case types.KindInterval:
		return oidInterval, 16
	}
	return oidVarchar, -1
}

// pgTypeName is a type's PostgreSQL name (format_type).
func pgTypeName(t types.Type) string {
	switch t.Kind {
	case types.KindArray:
		return pgTypeName(t.ElemType()) + "[]"
	case types.KindBool:
		return "boolean"
	case types.KindInt:
		return "integer"
	case types.KindBigInt:
		return "bigint"
	case types.KindDouble:
		return "double precision"
	case types.KindDecimal:
		if t.AnyScale() {
			return "numeric"
		}
		return fmt.Sprintf("numeric(%d,%d)", t.Precision, t.Scale)
	case types.KindTimestamp:
		return fmt.Sprintf("timestamp(%d) without time zone", t.Precision)
	case types.KindInterval:
		return "interval"
	}
	return "character varying"
}

// encodeText renders a value in PostgreSQL's text format (nil: NULL).
func encodeText(v types.Value) []byte {
	switch v.Kind() {
	case types.KindNull:
		return nil
	case types.KindBool:
		if v.Bool() {
			return []byte("t")
		}
		return []byte("f")
	case types.KindDouble:
		return []byte(strconv.FormatFloat(v.Float(), 'g', -1, 64))
	}
	return v.AppendText([]byte{}) // an empty string is not NULL
}

// pgEpoch is the zero of PostgreSQL's binary timestamps.
var pgEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// encodeBinary renders a value in PostgreSQL's binary format for its
// type's OID (nil: NULL).
func encodeBinary(v types.Value, t types.Type) ([]byte, error) {
	if v.IsNull() {
		return nil, nil
	}
	switch t.Kind {
	case types.KindBool:
		if v.Bool() {
			return []byte{1}, nil
		}
		return []byte{0}, nil
	case types.KindInt:
		return binary.BigEndian.AppendUint32(nil, uint32(int32(v.Int()))), nil
	case types.KindBigInt:
		return binary.BigEndian.AppendUint64(nil, uint64(v.Int())), nil
	case types.KindDouble:
		return binary.BigEndian.AppendUint64(nil, math.Float64bits(v.Float())), nil
	case types.KindTimestamp:
		us := v.Time().Sub(pgEpoch).Microseconds()
		return binary.BigEndian.AppendUint64(nil, uint64(us)), nil
	case types.KindInterval:
		b := binary.BigEndian.AppendUint64(nil, uint64(v.Int()*1000))
		return append(b, 0, 0, 0, 0, 0, 0, 0, 0), nil // days, months
	case types.KindDecimal:
		return numericBinary(string(v.AppendText(nil)))
	case types.KindArray:
		return arrayBinary(v, t.ElemType())
	}
	return v.AppendText([]byte{}), nil // an empty string is not NULL
}

// arrayBinary encodes a one-dimensional array as PostgreSQL's binary
// array: dimensions, a has-NULL flag, the element OID, the size and lower
// bound 1, then each element's length (-1: NULL) and binary form.
func arrayBinary(v types.Value, et types.Type) ([]byte, error) {
	elems := v.Elems()
	oid, _ := pgType(et)
	hasNull := uint32(0)
	for _, e := range elems {
		if e.IsNull() {
			hasNull = 1
		}
	}
	dims := uint32(1)
	if len(elems) == 0 {
		dims = 0
	}
	b := binary.BigEndian.AppendUint32(nil, dims)
	b = binary.BigEndian.AppendUint32(b, hasNull)
	b = binary.BigEndian.AppendUint32(b, oid)
	if dims == 1 {
		b = binary.BigEndian.AppendUint32(b, uint32(len(elems)))
		b = binary.BigEndian.AppendUint32(b, 1)
	}
	for _, e := range elems {
		if e.IsNull() {
			b = binary.BigEndian.AppendUint32(b, 0xffffffff)
			continue
		}
		eb, err := encodeBinary(e, et)
		if err != nil {
			return nil, fmt.Errorf("array element: %w", err)
		}
		b = append(binary.BigEndian.AppendUint32(b, uint32(len(eb))), eb...)
	}
	return b, nil
}

// numericBinary encodes a decimal's text ("-12.340") as PostgreSQL's
// binary NUMERIC: base-10000 digits with a weight, sign and scale.
func numericBinary(s string) ([]byte, error) {
	sign := uint16(0)
	if strings.HasPrefix(s, "-") {
		sign, s = 0x4000, s[1:]
	}
	intPart, frac, _ := strings.Cut(s, ".")
	for _, r := range intPart + frac {
		if r < '0' || r > '9' {
			return nil, fmt.Errorf("numeric %q: not a decimal", s)
		}
	}
	dscale := len(frac)
	intPart = strings.TrimLeft(intPart, "0")
	if pad := (4 - len(intPart)%4) % 4; pad > 0 {
		intPart = strings.Repeat("0", pad) + intPart
	}
	if pad := (4 - len(frac)%4) % 4; pad > 0 {
		frac += strings.Repeat("0", pad)
	}
	all := intPart + frac
	var digits []int16
	for i := 0; i < len(all); i += 4 {
		n, _ := strconv.Atoi(all[i : i+4])
		digits = append(digits, int16(n))
	}
	weight := len(intPart)/4 - 1
	for len(digits) > 0 && digits[0] == 0 {
		digits, weight = digits[1:], weight-1
	}
	for len(digits) > 0 && digits[len(digits)-1] == 0 {
		digits = digits[:len(digits)-1]
	}
	if len(digits) == 0 {
		weight, sign = 0, 0
	}
	b := binary.BigEndian.AppendUint16(nil, uint16(len(digits)))
	b = binary.BigEndian.AppendUint16(b, uint16(int16(weight)))
	b = binary.BigEndian.AppendUint16(b, sign)
	b = binary.BigEndian.AppendUint16(b, uint16(dscale))
	for _, d := range digits {
		b = binary.BigEndian.AppendUint16(b, uint16(d))
	}
	return b, nil
}

// paramLiteral turns a bound parameter into SQL text: NULL, a number or
// boolean as itself, anything else a quoted string. Binary parameters of
// the integer, float, bool and text OIDs are decoded; others are refused.
func paramLiteral(raw []byte, oid uint32, binaryFormat bool) (string, error) {
	if raw == nil {
		return "NULL", nil
	}
	switch oid {
	case oidTimestamp, oidInterval, oidNumeric:
		return typedParam(raw, oid, binaryFormat)
	}
	if binaryFormat {
		s, err := decodeBinaryParam(raw, oid)
		if err != nil {
			return "", err
		}
		raw = []byte(s)
		if oid == oidText || oid == oidVarchar {
			return quoteString(s), nil
		}
	}
	s := string(raw)
	switch oid {
	case oidText, oidVarchar:
		return quoteString(s), nil
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil && !strings.ContainsAny(s, "xXnNiI_") {
		if strings.HasPrefix(s, "-") {
			return "(" + s + ")", nil
		}
		return s, nil
	}
	switch strings.ToLower(s) {
	case "true", "false":
		if oid == oidBool || oid == 0 || oid == oidUnknown {
			return strings.ToUpper(s), nil
		}
	case "t", "f":
		if oid == oidBool {
			return map[string]string{"t": "TRUE", "f": "FALSE"}[strings.ToLower(s)], nil
		}
	}
	return quoteString(s), nil
}

// typedParam decodes a TIMESTAMP, INTERVAL or NUMERIC parameter (text or
// binary, as the server described it) with pgx's codecs into a literal.
func typedParam(raw []byte, oid uint32, binaryFormat bool) (string, error) {
	format := int16(pgtype.TextFormatCode)
	if binaryFormat {
		format = pgtype.BinaryFormatCode
	}
	m := pgtype.NewMap()
	switch oid {
	case oidTimestamp:
		var ts pgtype.Timestamp
		if err := m.Scan(oid, format, raw, &ts); err != nil || ts.InfinityModifier != pgtype.Finite {
			return "", fmt.Errorf("not a timestamp: %q", raw)
		}
		return "TIMESTAMP '" + ts.Time.UTC().Format("2006-01-02 15:04:05.000") + "'", nil
	case oidInterval:
		var iv pgtype.Interval
		if err := m.Scan(oid, format, raw, &iv); err != nil {
			return "", fmt.Errorf("not an interval: %q", raw)
		}
		if iv.Months != 0 {
			return "", fmt.Errorf("interval of %d months: clink's intervals have no months", iv.Months)
		}
		return fmt.Sprintf("INTERVAL '%d' MILLISECOND", int64(iv.Days)*86_400_000+iv.Microseconds/1000), nil
	}
	var n pgtype.Numeric
	if err := m.Scan(oid, format, raw, &n); err != nil || n.NaN || n.InfinityModifier != pgtype.Finite {
		return "", fmt.Errorf("not a finite numeric: %q", raw)
	}
	v, err := n.Value()
	if err != nil {
		return "", fmt.Errorf("numeric: %w", err)
	}
	if s := v.(string); strings.HasPrefix(s, "-") {
		return "(" + s + ")", nil
	}
	return v.(string), nil
}

func quoteString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// decodeBinaryParam decodes a binary parameter of a simple type to text.
func decodeBinaryParam(raw []byte, oid uint32) (string, error) {
	bad := func() (string, error) {
		return "", fmt.Errorf("binary parameter of type oid %d (%d bytes) is not supported: send it in text format", oid, len(raw))
	}
	switch oid {
	case oidBool:
		if len(raw) != 1 {
			return bad()
		}
		return strconv.FormatBool(raw[0] != 0), nil
	case oidInt2:
		if len(raw) != 2 {
			return bad()
		}
		return strconv.Itoa(int(int16(binary.BigEndian.Uint16(raw)))), nil
	case oidInt4:
		if len(raw) != 4 {
			return bad()
		}
		return strconv.Itoa(int(int32(binary.BigEndian.Uint32(raw)))), nil
	case oidInt8:
		if len(raw) != 8 {
			return bad()
		}
		return strconv.FormatInt(int64(binary.BigEndian.Uint64(raw)), 10), nil
	case oidFloat4:
		if len(raw) != 4 {
			return bad()
		}
		return strconv.FormatFloat(float64(math.Float32frombits(binary.BigEndian.Uint32(raw))), 'g', -1, 32), nil
	case oidFloat8:
		if len(raw) != 8 {
			return bad()
		}
		return strconv.FormatFloat(math.Float64frombits(binary.BigEndian.Uint64(raw)), 'g', -1, 64), nil
	case oidText, oidVarchar, oidUnknown:
		return string(raw), nil
	}
	return bad()
}

// bindParams replaces $1, $2, ... outside quotes and comments with the
// literals.
func bindParams(sql string, lits []string) (string, error) {
	var b strings.Builder
	last := 0
	var err error
	scanSQL(sql, func(i, _ int) bool {
		if sql[i] != '$' || i+1 >= len(sql) || sql[i+1] < '0' || sql[i+1] > '9' {
			return true
		}
		j := i + 1
		for j < len(sql) && sql[j] >= '0' && sql[j] <= '9' {
			j++
		}
		n, _ := strconv.Atoi(sql[i+1 : j])
		if n < 1 || n > len(lits) {
			err = fmt.Errorf("parameter $%d: the statement was bound with %d parameters", n, len(lits))
			return false
		}
		b.WriteString(sql[last:i])
		b.WriteString(lits[n-1])
		last = j
		return true
	})
	if err != nil {
		return "", err
	}
	b.WriteString(sql[last:])
	return b.String(), nil
}

// countParams is the highest $N in sql.
func countParams(sql string) int {
	n := 0
	scanSQL(sql, func(i, _ int) bool {
		if sql[i] == '$' {
			j := i + 1
			for j < len(sql) && sql[j] >= '0' && sql[j] <= '9' {
				j++
			}
			if k, err := strconv.Atoi(sql[i+1 : j]); err == nil {
				n = max(n, k)
			}
		}
		return true
	})
	return n
}
