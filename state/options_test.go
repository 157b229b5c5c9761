package state

import (
	"os"
	"path/filepath"
	"testing"
)

func TestParseBytes(t *testing.T) {
	cases := []struct {
		in   string
		want int64
		bad  bool
	}{
		{in: "0", want: 0},
		{in: "1048576", want: 1 << 20},
		{in: "64MiB", want: 64 << 20},
		{in: "1GiB", want: 1 << 30},
		{in: "512KiB", want: 512 << 10},
		{in: "1.5GiB", want: 3 << 29},
		{in: "100MB", want: 100e6},
		{in: "-1", bad: true},
		{in: "-64MiB", bad: true},
		{in: "MiB", bad: true},
		{in: "lots", bad: true},
		{in: "", bad: true},
	}
	for _, tc := range cases {
		got, err := ParseBytes(tc.in)
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d, bad=%v", tc.in, got, err, tc.want, tc.bad)
		}
	}
	if s := FormatBytes(64 << 20); s != "64MiB" {
		t.Errorf("FormatBytes = %s", s)
	}
}

func TestDefaultHotMaxBytes(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		meminfo string
		want    int64
	}{
		{"MemTotal:       16384000 kB\nMemFree: 1 kB\n", 16384000 << 10 / 4},
		{"MemTotal:       65536 kB\n", MinHotMaxBytes},
	} {
		p := filepath.Join(dir, "meminfo")
		if err := os.WriteFile(p, []byte(tc.meminfo), 0o600); err != nil {
			t.Fatal(err)
		}
		total, err := physicalMemory(p)
		if err != nil {
			t.Fatal(err)
		}
		got := max(total/4, MinHotMaxBytes)
		if got != tc.want {
			t.Errorf("budget for %q = %d, want %d", tc.meminfo, got, tc.want)
		}
	}
	if _, err := physicalMemory(filepath.Join(dir, "missing")); err == nil {
		t.Error("missing meminfo accepted")
	}
	if DefaultHotMaxBytes() < MinHotMaxBytes {
		t.Error("default below the floor")
	}
}

func TestKeyGroupRangesCoverAll(t *testing.T) {
	for par := 1; par <= 7; par++ {
		next := 0
		for s := range par {
			o := Options{}.ForSubtask(s, par)
			if err := o.normalize(); err != nil {
				t.Fatal(err)
			}
			if o.KeyGroupLo != next {
				t.Fatalf("par %d subtask %d starts at %d, want %d", par, s, o.KeyGroupLo, next)
			}
			next = o.KeyGroupHi
		}
		if next != DefaultMaxKeyGroups {
			t.Fatalf("par %d covers [0,%d)", par, next)
		}
	}
}
