package types

import (
	"encoding/binary"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Time zones. A TIMESTAMP_LTZ value is an instant, milliseconds since the
// epoch like a TIMESTAMP's; it may carry the name of the zone it is shown
// in (the session's, attached where a query's result leaves the plan), so
// String renders it as that zone's wall-clock time, as Flink shows
// TIMESTAMP_LTZ. Comparison, keys and state encodings use only the
// instant, so a value read back from state simply has no zone until it is
// shown again.

var zones sync.Map // name -> *time.Location

// LoadZone returns the location of an IANA zone name ("Europe/Berlin"),
// "UTC", or a fixed offset ("+01:00", "-0530", "UTC+2"); an unknown name is
// an error that says so. Locations are cached.
func LoadZone(name string) (*time.Location, error) {
	name = strings.TrimSpace(name)
	if l, ok := zones.Load(name); ok {
		return l.(*time.Location), nil
	}
	loc, err := loadZone(name)
	if err != nil {
		return nil, err
	}
	zones.Store(name, loc)
	return loc, nil
}

func loadZone(name string) (*time.Location, error) {
	switch strings.ToUpper(name) {
	case "", "LOCAL":
		return nil, fmt.Errorf("unknown time zone %q (use an IANA name such as 'Europe/Berlin', 'UTC' or an offset such as '+01:00')", name)
	case "UTC", "Z", "GMT":
		return time.UTC, nil
	}
	if off, ok := parseOffset(name); ok {
		return time.FixedZone(name, off), nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("unknown time zone %q (use an IANA name such as 'Europe/Berlin', 'UTC' or an offset such as '+01:00')", name)
	}
	return loc, nil
}

// parseOffset reads "+01:00", "-0530", "+2", "UTC+2", "GMT-03:30" as
// seconds east of UTC.
func parseOffset(s string) (int, bool) {
	u := strings.ToUpper(s)
	for _, p := range []string{"UTC", "GMT"} {
		u = strings.TrimPrefix(u, p)
	}
	if len(u) < 2 || (u[0] != '+' && u[0] != '-') {
		return 0, false
	}
	sign, digits := 1, strings.ReplaceAll(u[1:], ":", "")
	if u[0] == '-' {
		sign = -1
	}
	var h, m int
	switch len(digits) {
	case 1, 2:
		if _, err := fmt.Sscanf(digits, "%d", &h); err != nil {
			return 0, false
		}
	case 4:
		if _, err := fmt.Sscanf(digits, "%2d%2d", &h, &m); err != nil {
			return 0, false
		}
	default:
		return 0, false
	}
	if h > 18 || m > 59 {
		return 0, false
	}
	return sign * (h*3600 + m*60), true
}

// NewTimestampLTZ returns a TIMESTAMP_LTZ value: the instant ms, shown in
// zone (an IANA name LoadZone accepts; "" shows UTC).
func NewTimestampLTZ(ms int64, zone string) Value {
	return Value{kind: KindTimestamp, i: ms, s: zone}
}

// Zone is the zone a TIMESTAMP_LTZ value is shown in ("" for none).
func (v Value) Zone() string {
	if v.kind != KindTimestamp {
		return ""
	}
	return v.s
}

// InZone returns a timestamp value shown in zone (see NewTimestampLTZ);
// other values are returned unchanged.
func (v Value) InZone(zone string) Value {
	if v.kind != KindTimestamp {
		return v
	}
	v.s = zone
	return v
}

// zonedTime is v's instant in its zone (UTC without one, or when the zone
// does not load).
func (v Value) zonedTime() time.Time {
	t := time.UnixMilli(v.i).UTC()
	if v.s == "" {
		return t
	}
	if loc, err := LoadZone(v.s); err == nil {
		return t.In(loc)
	}
	return t
}

// WallToInstant reads the wall-clock time ms (a TIMESTAMP's value: the
// fields as if in UTC) as a time in loc and returns that instant (a
// TIMESTAMP_LTZ's value). A wall time a daylight-saving change skips or
// repeats resolves as Go's time.Date does.
func WallToInstant(ms int64, loc *time.Location) int64 {
	t := time.UnixMilli(ms).UTC()
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), loc).UnixMilli()
}

// InstantToWall returns the wall-clock time in loc of the instant ms, as a
// TIMESTAMP's value.
func InstantToWall(ms int64, loc *time.Location) int64 {
	t := time.UnixMilli(ms).In(loc)
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC).UnixMilli()
}

// ParseTimestampIn parses a timestamp text as an instant: text with a zone
// offset ("2024-01-01 10:00:00+01:00", "...Z") means that instant, text
// without one is a wall-clock time in loc.
func ParseTimestampIn(s string, loc *time.Location) (int64, error) {
	s = strings.TrimSpace(s)
	for _, l := range zonedLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t.UnixMilli(), nil
		}
	}
	ms, err := ParseTimestamp(s)
	if err != nil {
		return 0, fmt.Errorf("invalid TIMESTAMP_LTZ %q (want 2006-01-02 15:04:05[.000][+01:00])", s)
	}
	return WallToInstant(ms, loc), nil
}

var zonedLayouts = []string{
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999Z0700",
	"2006-01-02 15:04:05.999999999Z07",
	"2006-01-02 15:04:05.999999999 Z07:00",
	"2006-01-02T15:04:05.999999999Z07:00",
}

// zonedTimestampTag is the value encoding's kind byte of a TIMESTAMP_LTZ
// value carrying its display zone: the instant (varint) and the zone
// name follow. Values without a zone encode as plain timestamps.
const zonedTimestampTag Kind = 0xE0

func readZonedTimestamp(buf []byte) (Value, []byte, error) {
	i, n := binary.Varint(buf)
	if n <= 0 {
		return NullValue, nil, ErrCorrupt
	}
	buf = buf[n:]
	l, m := binary.Uvarint(buf)
	if m <= 0 || uint64(len(buf)-m) < l {
		return NullValue, nil, ErrCorrupt
	}
	return NewTimestampLTZ(i, string(buf[m:m+int(l)])), buf[m+int(l):], nil
}
