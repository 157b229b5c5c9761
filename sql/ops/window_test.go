package ops

import (
	"slices"
	"strings"
	"testing"
)

// TestWindowAssign checks window assignment against hand-computed
// windows: every window of the size that starts at a multiple of the
// size (TUMBLE, CUMULATE) or slide (HOP), plus the offset, and holds ts.
func TestWindowAssign(t *testing.T) {
	const min = 60_000
	for _, c := range []struct {
		name string
		spec WindowSpec
		ts   int64
		want [][2]int64
	}{
		{"tumble", WindowSpec{Kind: Tumble, Size: 10}, 25, [][2]int64{{20, 30}}},
		{"tumble-negative", WindowSpec{Kind: Tumble, Size: 10}, -5, [][2]int64{{-10, 0}}},
		{"tumble-offset", WindowSpec{Kind: Tumble, Size: 10, Offset: 3}, 12, [][2]int64{{3, 13}}},
		{"hop-multiple", WindowSpec{Kind: Hop, Slide: 10, Size: 30}, 25, [][2]int64{{0, 30}, {10, 40}, {20, 50}}},
		// issue 16: 14:23:10, slide 40 min, size 60 min is in [14:00, 15:00) only
		{"hop-not-multiple", WindowSpec{Kind: Hop, Slide: 40 * min, Size: 60 * min}, 863*min + 10_000, [][2]int64{{840 * min, 900 * min}}},
		{"hop-not-multiple-two", WindowSpec{Kind: Hop, Slide: 40 * min, Size: 60 * min}, 853 * min, [][2]int64{{800 * min, 860 * min}, {840 * min, 900 * min}}},
		{"hop-window-end-exclusive", WindowSpec{Kind: Hop, Slide: 2, Size: 3}, 5, [][2]int64{{4, 7}}},
		{"hop-size-below-slide", WindowSpec{Kind: Hop, Slide: 40, Size: 20}, 13, [][2]int64{{0, 20}}},
		{"hop-in-gap", WindowSpec{Kind: Hop, Slide: 40, Size: 20}, 23, nil},
		{"hop-negative", WindowSpec{Kind: Hop, Slide: 2, Size: 3}, -1, [][2]int64{{-2, 1}}},
		{"hop-offset", WindowSpec{Kind: Hop, Slide: 40, Size: 60, Offset: 10}, 83, [][2]int64{{50, 110}}},
		{"hop-offset-two", WindowSpec{Kind: Hop, Slide: 40, Size: 60, Offset: 10}, 63, [][2]int64{{10, 70}, {50, 110}}},
		{"cumulate", WindowSpec{Kind: Cumulate, Slide: 10, Size: 30}, 15, [][2]int64{{0, 20}, {0, 30}}},
		{"cumulate-offset", WindowSpec{Kind: Cumulate, Slide: 10, Size: 30, Offset: 5}, 15, [][2]int64{{5, 25}, {5, 35}}},
		{"session", WindowSpec{Kind: Session, Size: 7}, 15, [][2]int64{{15, 22}}},
	} {
		var got [][2]int64
		c.spec.Assign(c.ts, func(s, e int64) { got = append(got, [2]int64{s, e}) })
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: %+v at %d: got %v, want %v", c.name, c.spec, c.ts, got, c.want)
		}
	}
}

// TestWindowValidate: specs that cannot assign windows, or would put a
// row in more than MaxWindowsPerRow windows, are refused.
func TestWindowValidate(t *testing.T) {
	day := int64(86_400_000)
	cases := []struct {
		spec WindowSpec
		want string // "" : valid
	}{
		{WindowSpec{Kind: Hop, Slide: 1000, Size: 3000}, ""},
		{WindowSpec{Kind: Hop, Slide: 1, Size: MaxWindowsPerRow}, ""},
		{WindowSpec{Kind: Hop, Slide: 1, Size: 100 * day}, "in 8640000000 windows"},
		{WindowSpec{Kind: Cumulate, Slide: 1, Size: day}, "in 86400000 windows"},
		{WindowSpec{Kind: Tumble, Size: 1}, ""},
		{WindowSpec{Kind: Hop, Slide: 0, Size: 10}, "slide/step must be positive"},
	}
	for _, c := range cases {
		err := c.spec.Validate()
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%+v: err = %v, want %q", c.spec, err, c.want)
		}
	}
}
