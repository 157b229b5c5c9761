package objpool

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"strings"
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
		for _, format := range []int{1, 2} {
			t.Run(fmt.Sprintf("%d/v%d", n, format), func(t *testing.T) { testRunRoundTrip(t, n, format) })
		}
	}
}

func testRunRoundTrip(t *testing.T, n, format int) {
	{
		{
			recs := testRecords(n)
			data, ref := encodeRun("runs/000/x.run", recs, 512)
			if format == 1 {
				data, ref = encodeRunV1(recs, 512)
			}
			x, blocks, err := parseRun(data, nil)
			if err != nil {
				t.Fatal(err)
			}
			if ref.IndexOff+ref.IndexLen+footerLen(ref.format()) != ref.Size || ref.Count != n {
				t.Fatalf("ref %+v inconsistent with %d bytes", ref, len(data))
			}
			fp := 0
			for i, r := range recs {
				if !x.filter.mayContain(r.ik) {
					t.Fatalf("bloom false negative for record %d", i)
				}
				b := x.find(r.ik)
				got, ok, err := blocks[b].lookup(r.ik)
				if err != nil || !ok || string(got.value) != string(r.value) || got.deleted != r.deleted || got.keyGroup != r.keyGroup {
					t.Fatalf("record %d: got %+v, want %+v", i, got, r)
				}
				if x.filter.mayContain(fmt.Appendf(nil, "absent-%d", i)) {
					fp++
				}
			}
			if n >= 1000 && fp > n/20 {
				t.Fatalf("bloom false positives %d of %d", fp, n)
			}
			for b, blk := range blocks {
				if _, ok, err := blk.lookup(fmt.Appendf(nil, "\x00\x00\x00\x01k%06dx", b)); ok || err != nil {
					t.Fatalf("block %d: found an absent key (%v)", b, err)
				}
				if got, err := blk.records(); err != nil || len(got) == 0 {
					t.Fatalf("block %d: %d records, %v", b, len(got), err)
				}
			}
		}
	}
}

// A point read in a cached block allocates nothing.
func TestBlockLookupAllocs(t *testing.T) {
	recs := testRecords(2000)
	data, _ := encodeRun("runs/000/x.run", recs, 4096)
	x, blocks, err := parseRun(data, nil)
	if err != nil {
		t.Fatal(err)
	}
	ik := recs[1234].ik
	blk := blocks[x.find(ik)]
	if n := testing.AllocsPerRun(100, func() {
		if r, ok, err := blk.lookup(ik); !ok || err != nil || string(r.value) != "v1234" {
			t.Fatalf("lookup: %+v %v %v", r, ok, err)
		}
	}); n != 0 {
		t.Fatalf("lookup allocates %v times", n)
	}
}

// A format-2 block that is not as written is refused when read: its
// checksum covers records and offsets, and offsets out of order are
// refused even under a matching checksum.
func TestBlockTrailerChecked(t *testing.T) {
	data, ref := encodeRun("runs/000/x.run", testRecords(50), 1<<20)
	x, err := parseIndex(data[ref.IndexOff:ref.IndexOff+ref.IndexLen], ref.Format)
	if err != nil {
		t.Fatal(err)
	}
	br := x.blocks[0]
	b := append([]byte(nil), data[br.off:br.off+br.n]...)
	if _, err := parseBlock(b, 2); err != nil {
		t.Fatal(err)
	}
	b[len(b)-12]++ // the last record's offset
	if _, err := parseBlock(b, 2); err == nil {
		t.Fatal("a misplaced record offset was accepted")
	}
	b[len(b)-12] = 0 // before the previous record's offset, checksum fixed up
	body := b[:len(b)-4]
	binary.LittleEndian.PutUint32(b[len(b)-4:], crc32.Checksum(body, castagnoli))
	if _, err := parseBlock(b, 2); err == nil {
		t.Fatal("offsets out of order were accepted")
	}
}

// Corrupt or truncated runs give errors, never panics.
func TestRunCorruptInput(t *testing.T) {
	data, _ := encodeRun("runs/000/x.run", testRecords(300), 256)
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
		_, _, _ = parseRun(b, nil)
		_, _ = parseIndex(b[:rng.IntN(len(b))], 2)
		_, _ = parseIndex(b[rng.IntN(len(b)):], 3)
		_, _ = parseBlock(b[:rng.IntN(len(b))], 1)
		_, _ = parseBlock(b[:rng.IntN(len(b))], 2)
		_, _ = parseBlock(b[rng.IntN(len(b)):], 2)
		_, _ = decodeKeys("k", b[:rng.IntN(len(b))], 2)
		_, _ = decodeKeys("k", b[rng.IntN(len(b)):], 3)
	}
}

// mergeSources: the newest source wins a key, tombstones are dropped, the
// output is sorted.
func TestMergeSources(t *testing.T) {
	rec := func(k, v string) record {
		r := record{ik: []byte(k), value: []byte(v)}
		if v == "" {
			r.deleted = true
		}
		return r
	}
	var s []string
	err := mergeSources(context.Background(), []*runIter{
		sliceIter([]record{rec("b", "new"), rec("d", "")}),
		sliceIter([]record{rec("a", "old"), rec("b", "old"), rec("c", "old"), rec("d", "old")}),
		sliceIter([]record{rec("c", "older"), rec("e", "older")}),
	}, func(r record) { s = append(s, string(r.ik)+"="+string(r.value)) })
	if err != nil {
		t.Fatal(err)
	}
	if want := "a=old b=new c=old e=older"; strings.Join(s, " ") != want {
		t.Fatalf("merged %q, want %q", strings.Join(s, " "), want)
	}
}

// A run is refused when it is not the one its manifest entry describes:
// another run's bytes under its key (identity, checksum, size, count or
// format differ).
func TestRunIdentity(t *testing.T) {
	data, ref := encodeRun("runs/001/00000000000000000007-w-1.run", testRecords(200), 512)
	if _, _, err := parseRun(data, &ref); err != nil {
		t.Fatalf("the run as described: %v", err)
	}
	cases := []struct {
		name string
		edit func(r *RunRef)
	}{
		{"another key", func(r *RunRef) { r.Key = "runs/001/00000000000000000007-w-2.run" }},
		{"another checksum", func(r *RunRef) { r.CRC++ }},
		{"another record count", func(r *RunRef) { r.Count-- }},
		{"another size", func(r *RunRef) { r.Size++ }},
		{"another format", func(r *RunRef) { r.Format = 2 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want := ref
			tc.edit(&want)
			if _, _, err := parseRun(data, &want); !errors.Is(err, errCorrupt) {
				t.Fatalf("parseRun = %v, want a damage error", err)
			}
			if want.Size == ref.Size && want.Format == ref.Format {
				tail := data[ref.IndexOff:]
				ib, err := checkTail(&want, tail)
				if err == nil {
					var x *runIndex
					if x, err = parseIndex(ib, 3); err == nil {
						err = checkIndex(&want, x)
					}
				}
				if !errors.Is(err, errCorrupt) {
					t.Fatalf("ranged index read = %v, want a damage error", err)
				}
			}
		})
	}
}

// TestDetachedSurvivesItsBuffer: the index and blocks of a run read whole
// are cached apart, so each must own its bytes. Scribbling over the buffer
// they were parsed from must leave every lookup intact; sharing it would
// let one cached block or index hold the whole run, beyond the cache's
// bound.
func TestDetachedSurvivesItsBuffer(t *testing.T) {
	recs := testRecords(300)
	data, _ := encodeRun("runs/000/x.run", recs, 512)
	x, blocks, err := parseRun(data, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) < 2 {
		t.Fatalf("%d blocks, want several", len(blocks))
	}
	x = x.detached()
	for i := range blocks {
		blocks[i] = blocks[i].detached()
	}
	for i := range data {
		data[i] = 0xa5
	}
	for i, r := range recs {
		if !x.filter.mayContain(r.ik) {
			t.Fatalf("record %d: the filter lost it", i)
		}
		b := x.find(r.ik)
		if b < 0 {
			t.Fatalf("record %d: the index lost it", i)
		}
		got, ok, err := blocks[b].lookup(r.ik)
		if err != nil || !ok || string(got.value) != string(r.value) || got.deleted != r.deleted {
			t.Fatalf("record %d: got %+v, %v, %v; want %+v", i, got, ok, err, r)
		}
	}
}
