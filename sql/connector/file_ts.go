package connector

import "time"

// fastTimestamp parses the common text form of a TIMESTAMP,
// "2006-01-02 15:04:05" with an optional '.' and 1 to 9 fraction digits
// (or a 'T' for the space), without time.Parse's layout interpretation.
// It accepts a subset of what types.ParseTimestamp does and gives the
// same milliseconds; !ok sends anything else (other forms, out-of-range
// fields) down that path.
func fastTimestamp(s string) (int64, bool) {
	if len(s) < 19 || s[4] != '-' || s[7] != '-' || s[10] != ' ' && s[10] != 'T' || s[13] != ':' || s[16] != ':' {
		return 0, false
	}
	y, ok1 := num(s, 0, 4)
	mo, ok2 := num(s, 5, 2)
	d, ok3 := num(s, 8, 2)
	h, ok4 := num(s, 11, 2)
	mi, ok5 := num(s, 14, 2)
	sec, ok6 := num(s, 17, 2)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || sec > 59 {
		return 0, false
	}
	if d > daysIn(mo, y) {
		return 0, false
	}
	ns := 0
	if len(s) > 19 {
		digits := len(s) - 20
		if s[19] != '.' || digits < 1 || digits > 9 {
			return 0, false
		}
		f, ok := num(s, 20, digits)
		if !ok {
			return 0, false
		}
		for range 9 - digits {
			f *= 10
		}
		ns = f
	}
	return time.Date(y, time.Month(mo), d, h, mi, sec, ns, time.UTC).UnixMilli(), true
}

// num reads n decimal digits at s[i:].
func num(s string, i, n int) (int, bool) {
	v := 0
	for _, c := range []byte(s[i : i+n]) {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, true
}

func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}
