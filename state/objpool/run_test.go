package objpool

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

func testRecords(n int) []record {
	recs := make([]record, n)
	for i := range recs {
		recs[i] = record{ik: fmt.Appendf(nil, "\x00\x00\x00\x01k%06d", i), value: fmt.Appendf(nil, "v%d", i), keyGroup: i % 5}
		if i%7 == 0 {
			recs[i].deleted, recs[i].value = true, nil
		}
	}
	return recs
}

func TestRunRoundTrip(t *testing.T) {
	for _, n := range []int{0, 1, 10, 5000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			recs := testRecords(n)
			data, ref := encodeRun(recs, 512)
			x, blocks, err := parseRun(data)
			if err != nil {
				t.Fatal(err)
			}
			if ref.IndexOff+ref.IndexLen+footerSize != ref.Size || ref.Count != n {
				t.Fatalf("ref %+v inconsistent with %d bytes", ref, len(data))
			}
			fp := 0
			for i, r := range recs {
				if !x.filter.mayContain(r.ik) {
					t.Fatalf("bloom false negative for record %d", i)
				}
				b := x.find(r.ik)
				got, ok := blocks[b].lookup(r.ik)
				if !ok || string(got.value) != string(r.value) || got.deleted != r.deleted || got.keyGroup != r.keyGroup {
					t.Fatalf("record %d: got %+v, want %+v", i, got, r)
				}
				if x.filter.mayContain(fmt.Appendf(nil, "absent-%d", i)) {
					fp++
				}
			}
			if n >= 1000 && fp > n/20 {
				t.Fatalf("bloom false positives %d of %d", fp, n)
			}
		})
	}
}

// Corrupt or truncated runs give errors, never panics.
func TestRunCorruptInput(t *testing.T) {
	data, _ := encodeRun(testRecords(300), 256)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 2000; i++ {
		b := append([]byte(nil), data...)
		switch i % 3 {
		case 0:
			b = b[:rng.IntN(len(b))]
		default:
			for j := 0; j < 1+rng.IntN(8); j++ {
				b[rng.IntN(len(b))] = byte(rng.Uint32())
			}
		}
		_, _, _ = parseRun(b)
		_, _ = parseIndex(b[:rng.IntN(len(b))])
		_, _ = parseBlock(b[:rng.IntN(len(b))])
		_, _ = decodeKeys(b[:rng.IntN(len(b))])
	}
}
