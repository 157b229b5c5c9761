package repl

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

func TestFitColumns(t *testing.T) {
	for _, tc := range []struct {
		w          []int
		off, width int
		want       int
	}{
		{[]int{3, 3, 3}, 0, 80, 3},
		{[]int{3, 3, 3}, 0, 11, 2}, // 5 + 1 + 5 = 11
		{[]int{3, 3, 3}, 0, 10, 1},
		{[]int{3, 3, 3}, 1, 11, 3},
		{[]int{100, 3}, 0, 20, 1}, // one column always, clipped later
		{[]int{3, 3, 3}, 3, 20, 3},
	} {
		if got := fitColumns(tc.w, tc.off, tc.width); got != tc.want {
			t.Errorf("fitColumns(%v, %d, %d) = %d, want %d", tc.w, tc.off, tc.width, got, tc.want)
		}
	}
}

func TestClip(t *testing.T) {
	for _, tc := range []struct {
		in    string
		width int
		want  string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"a longer line", 8, "a longe…"},
		{ansiDim + "dimmed status line" + ansiReset, 6, ansiDim + "dimme…" + ansiReset},
		{"ünïcödé text", 5, "ünïc…"},
	} {
		got := clip(tc.in, tc.width)
		if ansi.Strip(got) != ansi.Strip(tc.want) || ansi.StringWidth(got) > tc.width {
			t.Errorf("clip(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
		}
	}
}

func TestArrowKeys(t *testing.T) {
	for _, tc := range []struct {
		keys string
		want []int // per key: 0 passed on, 2 consumed, else the direction
	}{
		{"\x1b[C", []int{2, 2, 1}},
		{"\x1b[D", []int{2, 2, -1}},
		{"\x1bOC", []int{2, 2, 1}},
		{"\x1b[A", []int{2, 2, 2}},
		{"c", []int{0}}, // a plain C still checkpoints
		{"\x1b[Cc", []int{2, 2, 1, 0}},
	} {
		var v view
		for i := range len(tc.keys) {
			esc, dir := v.arrowKey(tc.keys[i])
			got := 0
			switch {
			case dir != 0:
				got = dir
			case esc:
				got = 2
			}
			if got != tc.want[i] {
				t.Errorf("%q: key %d gave %d, want %d", tc.keys, i, got, tc.want[i])
			}
		}
	}
}

func TestRenderExpanded(t *testing.T) {
	got := RenderExpanded([]string{"id", "name"}, [][]string{{"1", "alpha"}, {"22", "b"}})
	want := strings.Join([]string{
		"-[ RECORD 1 ]",
		"id   | 1",
		"name | alpha",
		"-[ RECORD 2 ]",
		"id   | 22",
		"name | b",
		"(2 rows)", "",
	}, "\n")
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if got := recordRule(1, 14, 20); got != "-[ RECORD 1 ]--+"+strings.Repeat("-", 21) {
		t.Errorf("recordRule = %q", got)
	}
	for in, want := range map[string]Expanded{"on": ExpandedOn, "AUTO": ExpandedAuto, "false": ExpandedOff} {
		if got, err := parseExpanded(in); err != nil || got != want {
			t.Errorf("parseExpanded(%q) = %q, %v", in, got, err)
		}
	}
}
