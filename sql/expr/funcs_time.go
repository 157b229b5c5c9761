package expr

import (
	"fmt"
	"strings"
	"time"

	"clink/sql/types"
)

func init() {
	register([]string{"TO_CHAR"}, &builtin{2, 2, sig(types.Varchar, ts, str), func(a []types.Value) (types.Value, error) {
		return vc(ToChar(a[0].Time(), a[1].Str()))
	}, false})
	register([]string{"DATE_FORMAT"}, &builtin{2, 2, sig(types.Varchar, ts, str), func(a []types.Value) (types.Value, error) {
		return vc(DateFormat(a[0].Time(), a[1].Str()))
	}, false})
	register([]string{"DATE_TRUNC"}, &builtin{2, 2, sig(types.Timestamp, str, ts), dateTrunc, false})
	register([]string{"TO_TIMESTAMP"}, &builtin{1, 1, sig(types.Timestamp, str), func(a []types.Value) (types.Value, error) {
		return types.Cast(a[0], types.Timestamp)
	}, false})
}

// ToChar formats t with PostgreSQL to_char patterns: YYYY, YY, MM, DD,
// HH24, HH12 and HH (12-hour), MI, SS, MS, matched case-insensitively (so
// 'mm' is the month, as in PostgreSQL). Other characters are copied.
func ToChar(t time.Time, format string) string {
	var b strings.Builder
	hour12 := (t.Hour()+11)%12 + 1
	pats := []struct {
		pat string
		val func() string
	}{
		{"YYYY", func() string { return fmt.Sprintf("%04d", t.Year()) }},
		{"HH24", func() string { return fmt.Sprintf("%02d", t.Hour()) }},
		{"HH12", func() string { return fmt.Sprintf("%02d", hour12) }},
		{"HH", func() string { return fmt.Sprintf("%02d", hour12) }},
		{"YY", func() string { return fmt.Sprintf("%02d", t.Year()%100) }},
		{"MM", func() string { return fmt.Sprintf("%02d", int(t.Month())) }},
		{"DD", func() string { return fmt.Sprintf("%02d", t.Day()) }},
		{"MI", func() string { return fmt.Sprintf("%02d", t.Minute()) }},
		{"SS", func() string { return fmt.Sprintf("%02d", t.Second()) }},
		{"MS", func() string { return fmt.Sprintf("%03d", t.Nanosecond()/1e6) }},
	}
outer:
	for i := 0; i < len(format); {
		for _, p := range pats {
			if len(format)-i >= len(p.pat) && strings.EqualFold(format[i:i+len(p.pat)], p.pat) {
				b.WriteString(p.val())
				i += len(p.pat)
				continue outer
			}
		}
		b.WriteByte(format[i])
		i++
	}
	return b.String()
}

// DateFormat formats t with Flink/Java patterns: yyyy, yy, MM, dd, HH, hh,
// mm, ss, SSS; quoted text ('T') is copied.
func DateFormat(t time.Time, format string) string {
	var b strings.Builder
	for i := 0; i < len(format); {
		c := format[i]
		j := i
		for j < len(format) && format[j] == c {
			j++
		}
		run := format[i:j]
		switch c {
		case 'y':
			if len(run) == 2 {
				fmt.Fprintf(&b, "%02d", t.Year()%100)
			} else {
				fmt.Fprintf(&b, "%04d", t.Year())
			}
		case 'M':
			fmt.Fprintf(&b, "%0*d", len(run), int(t.Month()))
		case 'd':
			fmt.Fprintf(&b, "%0*d", len(run), t.Day())
		case 'H':
			fmt.Fprintf(&b, "%0*d", len(run), t.Hour())
		case 'h':
			fmt.Fprintf(&b, "%0*d", len(run), (t.Hour()+11)%12+1)
		case 'm':
			fmt.Fprintf(&b, "%0*d", len(run), t.Minute())
		case 's':
			fmt.Fprintf(&b, "%0*d", len(run), t.Second())
		case 'S':
			fmt.Fprintf(&b, "%03d", t.Nanosecond()/1e6)
		case '\'':
			end := strings.IndexByte(format[i+1:], '\'')
			if end < 0 {
				b.WriteString(format[i+1:])
				return b.String()
			}
			b.WriteString(format[i+1 : i+1+end])
			j = i + end + 2
		default:
			b.WriteString(run)
		}
		i = j
	}
	return b.String()
}

func dateTrunc(a []types.Value) (types.Value, error) {
	t := a[1].Time()
	var out time.Time
	switch strings.ToLower(a[0].Str()) {
	case "year":
		out = time.Date(t.Year(), 1, 1, 0, 0, 0, 0, time.UTC)
	case "month":
		out = time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	case "day":
		out = time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	case "hour":
		out = t.Truncate(time.Hour)
	case "minute":
		out = t.Truncate(time.Minute)
	case "second":
		out = t.Truncate(time.Second)
	default:
		return types.NullValue, fmt.Errorf("unknown unit %q", a[0].Str())
	}
	return types.NewTimestampTime(out), nil
}
