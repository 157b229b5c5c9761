package connector

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestDatagenUniformInts: random integers in [min, max] are uniform, the
// two ends included as often as the rest (a chi-square bound loose enough
// never to fail by chance at this sample size, tight enough to catch ends
// with half the weight).
func TestDatagenUniformInts(t *testing.T) {
	cases := []struct{ min, max float64 }{{1, 5}, {0, 1}, {-3, 3}, {7, 7}, {0.5, 3.5}}
	for _, c := range cases {
		rng := rand.New(rand.NewPCG(1, 2))
		counts := map[float64]int{}
		const n = 200_000
		for range n {
			v := uniformInt(c.min, c.max, rng.Float64())
			if v < math.Ceil(c.min) || v > math.Floor(c.max) || v != math.Trunc(v) {
				t.Fatalf("[%v, %v]: %v out of range", c.min, c.max, v)
			}
			counts[v]++
		}
		k := math.Floor(c.max) - math.Ceil(c.min) + 1
		if float64(len(counts)) != k {
			t.Fatalf("[%v, %v]: %d distinct values, want %v", c.min, c.max, len(counts), k)
		}
		want, chi := n/k, 0.0
		for _, got := range counts {
			chi += (float64(got) - want) * (float64(got) - want) / want
		}
		if chi > 50+5*k {
			t.Errorf("[%v, %v]: chi-square %.1f over %v values: not uniform %v", c.min, c.max, chi, k, counts)
		}
	}
}
