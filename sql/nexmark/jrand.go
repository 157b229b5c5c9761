package nexmark

// jrand is java.util.Random, which the reference generator seeds once per
// event with the event id; porting it keeps the streams' shapes (and, for
// seed 0, the exact draws) of the Beam/Flink generator.
type jrand struct{ seed int64 }

const jrandMask = (1 << 48) - 1

func newJRand(seed int64) *jrand { return &jrand{seed: (seed ^ 0x5DEECE66D) & jrandMask} }

func (r *jrand) next(bits uint) int32 {
	r.seed = (r.seed*0x5DEECE66D + 0xB) & jrandMask
	return int32(r.seed >> (48 - bits))
}

// nextInt returns a uniform int in [0, n); n must be positive.
func (r *jrand) nextInt(n int32) int32 {
	if n&(-n) == n {
		return int32((int64(n) * int64(r.next(31))) >> 31)
	}
	for {
		bits := r.next(31)
		val := bits % n
		if bits-val+(n-1) >= 0 {
			return val
		}
	}
}

func (r *jrand) nextLong() int64 { return int64(r.next(32))<<32 + int64(r.next(32)) }

func (r *jrand) nextDouble() float64 {
	return float64(int64(r.next(26))<<27+int64(r.next(27))) * (1.0 / (1 << 53))
}

// nextLongN is the reference LongGenerator.nextLong(random, n).
func (r *jrand) nextLongN(n int64) int64 {
	if n < 1<<31-1 {
		return int64(r.nextInt(int32(n)))
	}
	v := r.nextLong() % n
	if v < 0 {
		v = -v
	}
	return v
}
