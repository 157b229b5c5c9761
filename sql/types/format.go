package types

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// TimestampLayout is how TIMESTAMP(3) values are displayed and parsed.
const TimestampLayout = "2006-01-02 15:04:05.000"

// String renders v for display: NULL as "NULL", TIMESTAMP as
// "2006-01-02 15:04:05.000" (UTC), DOUBLE in the shortest form that round
// trips, DECIMAL with exactly its scale's digits.
func (v Value) String() string {
	switch v.kind {
	case KindNull:
		return "NULL"
	case KindBool:
		if v.i != 0 {
			return "true"
		}
		return "false"
	case KindInt, KindBigInt:
		return strconv.FormatInt(v.i, 10)
	case KindDouble:
		return FormatDouble(v.Float())
	case KindDecimal:
		return FormatDecimal(v.i, v.scale)
	case KindVarchar:
		return v.s
	case KindTimestamp:
		return v.zonedTime().Format(TimestampLayout)
	case KindInterval:
		return FormatInterval(v.i)
	case KindArray:
		return formatArray(v)
	}
	return fmt.Sprintf("?kind%d", v.kind)
}

// AppendText appends String's rendering of v to b without allocating for
// the common kinds (result writers call it once per value).
func (v Value) AppendText(b []byte) []byte {
	switch v.kind {
	case KindInt, KindBigInt:
		return strconv.AppendInt(b, v.i, 10)
	case KindVarchar:
		return append(b, v.s...)
	case KindBool:
		return strconv.AppendBool(b, v.i != 0)
	case KindTimestamp:
		return v.zonedTime().AppendFormat(b, TimestampLayout)
	}
	return append(b, v.String()...)
}

// FormatDouble renders f in the shortest round-trip form, in positional
// notation between 1e-4 and 1e21 and in exponent notation outside;
// "NaN", "Infinity" and "-Infinity" for the specials.
func FormatDouble(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	if a := math.Abs(f); a == 0 || (a >= 1e-4 && a < 1e21) {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// FormatDecimal renders unscaled*10^-scale with exactly scale fraction digits.
func FormatDecimal(unscaled int64, scale uint8) string {
	neg := unscaled < 0
	u := uint64(unscaled)
	if neg {
		u = -u
	}
	digits := strconv.FormatUint(u, 10)
	if scale > 0 {
		if len(digits) <= int(scale) {
			digits = strings.Repeat("0", int(scale)-len(digits)+1) + digits
		}
		cut := len(digits) - int(scale)
		digits = digits[:cut] + "." + digits[cut:]
	}
	if neg {
		return "-" + digits
	}
	return digits
}

// FormatInterval renders an interval of ms milliseconds PostgreSQL-style:
// "[-]D day[s] HH:MM:SS[.mmm]" with the day part omitted when zero.
func FormatInterval(ms int64) string {
	var b strings.Builder
	u := uint64(ms)
	if ms < 0 {
		b.WriteByte('-')
		u = -u
	}
	days := u / 86400000
	u %= 86400000
	if days == 1 {
		b.WriteString("1 day ")
	} else if days > 1 {
		fmt.Fprintf(&b, "%d days ", days)
	}
	h, m, s, f := u/3600000, u/60000%60, u/1000%60, u%1000
	fmt.Fprintf(&b, "%02d:%02d:%02d", h, m, s)
	if f != 0 {
		fmt.Fprintf(&b, ".%03d", f)
	}
	return b.String()
}

// String renders a row as its values separated by tabs (NULL as "NULL").
func (r Row) String() string {
	parts := make([]string, len(r))
	for i, v := range r {
		parts[i] = v.String()
	}
	return strings.Join(parts, "\t")
}
