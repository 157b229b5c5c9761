package ops

import (
	"slices"
	"testing"

	"clink/engine"
	"clink/sql/types"
)

// aggOf makes a GROUP BY k aggregate of aggs, and its keyed part.
func aggOf(t *testing.T, aggs ...string) func() (engine.Operator[Change], *keyed) {
	return func() (engine.Operator[Change], *keyed) {
		a := newAgg(t, "k", aggs...)
		return a, &a.keyed
	}
}

// hotInputs is a few keys, each inserted many times with some retracted:
// a key's first read misses the hot tier, its later ones mostly hit.
func hotInputs() []input {
	var in []input
	for i := range 300 {
		in = append(in, ins(0, row(i%3, i%7)))
		if i%5 == 4 {
			in = append(in, del(0, row(i%3, i%7)))
		}
	}
	return in
}

// TestProcessHot: on the async path a record whose entry is hot takes the
// inline hit path and a miss does not (both happen); the synchronous path
// never offers it; an aggregate that may need second reads opts out; and
// every path's changelog folds to the same rows.
func TestProcessHot(t *testing.T) {
	cases := []struct {
		name   string
		make   func() (engine.Operator[Change], *keyed)
		inline bool // whether the async path may take the inline hit path
	}{
		{"distinct", func() (engine.Operator[Change], *keyed) {
			d := NewDistinct("distinct", 9, []types.Type{types.BigInt, types.BigInt})
			return d, &d.keyed
		}, true},
		{"aggregate", aggOf(t, "COUNT(*)", "SUM(v)", "AVG(v)"), true},
		{"aggregate distinct", aggOf(t, "COUNT(*)", "COUNT(DISTINCT v)"), false},
		{"aggregate min tree", aggOf(t, "MIN(v)"), false},
	}
	in := hotInputs()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var want []string
			for _, p := range opPaths {
				op, k := c.make()
				got := materialize(runOp(t, p, op, in))
				if want == nil {
					want = got
				} else if !slices.Equal(got, want) {
					t.Fatalf("%s: got  %q\nwant %q", p.name, got, want)
				}
				switch {
				case !p.async || !c.inline:
					if k.hotHits != 0 || k.hotMisses != 0 {
						t.Errorf("%s: %d inline hits, %d misses, want none", p.name, k.hotHits, k.hotMisses)
					}
				case k.hotHits == 0 || k.hotMisses == 0:
					t.Errorf("%s: %d inline hits, %d misses, want both", p.name, k.hotHits, k.hotMisses)
				}
			}
			if len(want) == 0 {
				t.Fatal("no output")
			}
		})
	}
}
