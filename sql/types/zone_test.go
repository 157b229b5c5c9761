package types

import (
	"strings"
	"testing"
	"time"
)

// TestLoadZone: IANA names, UTC and offsets load; anything else is an
// error naming the zone.
func TestLoadZone(t *testing.T) {
	ok := []struct {
		name string
		off  int // seconds east of UTC on 2024-01-15
	}{
		{"Europe/Berlin", 3600}, {"UTC", 0}, {"utc", 0}, {"+01:00", 3600}, {"-0530", -19800},
		{"UTC+2", 7200}, {"GMT-03:30", -12600}, {"America/Los_Angeles", -28800},
	}
	for _, tc := range ok {
		loc, err := LoadZone(tc.name)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if _, off := time.Date(2024, 1, 15, 12, 0, 0, 0, loc).Zone(); off != tc.off {
			t.Errorf("%s: offset %d, want %d", tc.name, off, tc.off)
		}
	}
	for _, bad := range []string{"Mars/Olympus", "", "local", "+25:00", "+1:2:3"} {
		if _, err := LoadZone(bad); err == nil || !strings.Contains(err.Error(), "unknown time zone") {
			t.Errorf("%q: error %v, want unknown time zone", bad, err)
		}
	}
}

// TestWallInstant: wall times of Europe/Berlin to instants and back,
// around the 2024-03-31 spring change (02:00 CET -> 03:00 CEST).
func TestWallInstant(t *testing.T) {
	berlin, _ := LoadZone("Europe/Berlin")
	cases := []struct{ wall, instant string }{
		{"2024-01-15 12:00:00", "2024-01-15 11:00:00"},
		{"2024-07-01 12:00:00", "2024-07-01 10:00:00"},
		{"2024-03-31 01:59:59", "2024-03-31 00:59:59"},
		{"2024-03-31 03:00:00", "2024-03-31 01:00:00"},
	}
	for _, tc := range cases {
		w, _ := ParseTimestamp(tc.wall)
		i, _ := ParseTimestamp(tc.instant)
		if got := WallToInstant(w, berlin); got != i {
			t.Errorf("%s Berlin: instant %s, want %s", tc.wall, NewTimestamp(got), tc.instant)
		}
		if got := InstantToWall(i, berlin); got != w {
			t.Errorf("%s UTC: Berlin wall %s, want %s", tc.instant, NewTimestamp(got), tc.wall)
		}
	}
}

// TestZonedValue: a TIMESTAMP_LTZ value shows in its zone, compares by
// its instant, and keeps the zone through the value encoding.
func TestZonedValue(t *testing.T) {
	v := NewTimestampLTZ(0, "Asia/Shanghai")
	if got := v.String(); got != "1970-01-01 08:00:00.000" {
		t.Fatalf("shown %s, want 1970-01-01 08:00:00.000", got)
	}
	if !Equal(v, NewTimestamp(0)) {
		t.Fatal("a zoned value does not equal its instant")
	}
	back, rest, err := ReadValue(AppendValue(nil, v))
	if err != nil || len(rest) != 0 || back.Zone() != "Asia/Shanghai" || back.Int() != 0 {
		t.Fatalf("round trip: %v %v %q %d", err, rest, back.Zone(), back.Int())
	}
	if plain := AppendValue(nil, NewTimestamp(5)); plain[0] != byte(KindTimestamp) {
		t.Fatalf("a plain timestamp's encoding changed: %v", plain)
	}
}
