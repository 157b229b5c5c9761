package connector

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"clink/sql/expr"
	"clink/sql/ops"
	"clink/sql/types"
	"clink/state"
)

func txnTable() *Table {
	return &Table{Name: "out", Connector: "csv", Options: map[string]string{"path": "out.csv", "header": "true"},
		Columns: []expr.Column{{Name: "k", Type: types.BigInt}, {Name: "v", Type: types.BigInt}}}
}

// txnRun is a sink run killed after checkpoint 3's barrier: checkpoints 1
// and 2 published, 3 staged and committed (its record kept) but not
// published. want is the output once 3 is published; final, when set, lets
// the run finish instead.
type txnRun struct {
	dir  string
	recs map[state.CheckpointID][]byte // each checkpoint's record
	want map[state.CheckpointID][]byte // the output once it is published
}

func newTxnRun(t *testing.T, final bool) txnRun {
	t.Helper()
	r := txnRun{dir: t.TempDir(), recs: map[state.CheckpointID][]byte{}, want: map[state.CheckpointID][]byte{}}
	s, err := LockTxnFileSink(txnTable(), Env{BaseDir: r.dir}, []string{"k", "v"}, false, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Open("r1", 0, nil); err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	want.WriteString("k,v\n")
	for id := state.CheckpointID(1); id <= 3; id++ {
		for i := range 1000 {
			k := int64(id)*1000 + int64(i)
			s.Write(ops.Change{Kind: ops.Insert, Row: types.Row{types.NewBigInt(k), types.NewBigInt(k * 7)}})
			fmt.Fprintf(&want, "%d,%d\n", k, k*7)
		}
		s.Barrier(id)
		rec := s.Record(id)
		if len(rec) != 1 || !bytes.Equal(rec[0].Key, TxnRecordKey) {
			t.Fatalf("record of checkpoint %d: %v", id, rec)
		}
		r.recs[id], r.want[id] = rec[0].Value, bytes.Clone(want.Bytes())
		if id < 3 {
			if err := s.Committed(id); err != nil {
				t.Fatal(err)
			}
		}
	}
	if final {
		if err := s.Committed(3); err != nil {
			t.Fatal(err)
		}
		if err := s.Finish(); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	return r
}

func (r txnRun) path(name string) string { return filepath.Join(r.dir, name) }

func (r txnRun) resume(t *testing.T, restore state.CheckpointID) (*TxnFileSink, error) {
	s, err := LockTxnFileSink(txnTable(), Env{BaseDir: r.dir}, []string{"k", "v"}, false, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Open("r1", restore, r.recs[restore]); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func mutate(t *testing.T, path string, f func([]byte) []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, f(b), 0o644); err != nil {
		t.Fatal(err)
	}
}

func flip(b []byte) []byte { b[len(b)/2] ^= 4; return b }

// TestTxnSinkDamageRefused: a resume of the file sink after its output,
// commit record or staged parts were damaged fails with an error that says
// so (state.ErrCorrupt) and leaves the output as it found it: never
// "repaired" (no NUL bytes), never a silent loss. Undamaged, the resume
// publishes exactly the committed changes.
func TestTxnSinkDamageRefused(t *testing.T) {
	part3 := filepath.Join("out.csv.clink-staging", fmt.Sprintf("%020d.part", 3))
	cases := []struct {
		name    string
		final   bool
		damage  func(t *testing.T, r txnRun)
		want    string             // in the error; "" for no error
		restore state.CheckpointID // 0: 3
	}{
		{"undamaged", false, func(*testing.T, txnRun) {}, "", 0},
		{"undamaged, restored to checkpoint 1", false, func(*testing.T, txnRun) {}, "", 1},
		{"killed while publishing checkpoint 3", false, func(t *testing.T, r txnRun) {
			part, err := os.ReadFile(r.path(part3))
			if err != nil {
				t.Fatal(err)
			}
			mutate(t, r.path("out.csv"), func(b []byte) []byte { return append(b, part[:len(part)/2]...) })
		}, "", 0},
		{"commit record of an older clink (version 1, no checksums)", false, func(t *testing.T, r txnRun) {
			s := &TxnFileSink{path: r.path("out.csv")}
			m, err := s.readMarker()
			if err != nil {
				t.Fatal(err)
			}
			m.Version, m.Output = 1, ""
			for i := range m.Entries {
				m.Entries[i].CRC = 0
			}
			b, _ := json.Marshal(m)
			if err := os.WriteFile(s.markerPath(), b, 0o644); err != nil {
				t.Fatal(err)
			}
			delete(r.recs, 3) // nor did its checkpoints record the output
		}, "", 0},
		{"killed while rewinding to checkpoint 1", false, func(t *testing.T, r txnRun) {
			// the commit record already cut back, the output not yet
			s := &TxnFileSink{path: r.path("out.csv")}
			m, err := s.readMarker()
			if err != nil {
				t.Fatal(err)
			}
			whole, err := sumFile(s.path, int64(len(r.want[2])))
			if err != nil {
				t.Fatal(err)
			}
			s.mark = m
			s.mark.Entries, s.mark.Rewind = m.Entries[:1], &commitEntry{Length: whole.Length, CRC: whole.CRC}
			if err := s.writeMarker(); err != nil {
				t.Fatal(err)
			}
		}, "", 1},
		{"commit record deleted", false, func(t *testing.T, r txnRun) { os.Remove(r.path("out.csv.clink-commit")) }, "commit record", 0},
		{"commit record byte flipped", false, func(t *testing.T, r txnRun) { mutate(t, r.path("out.csv.clink-commit"), flip) }, "damaged", 0},
		{"commit record cut short", false, func(t *testing.T, r txnRun) {
			mutate(t, r.path("out.csv.clink-commit"), func(b []byte) []byte { return b[:len(b)-3] })
		}, "damaged", 0},
		{"output cut to half", false, func(t *testing.T, r txnRun) {
			mutate(t, r.path("out.csv"), func(b []byte) []byte { return b[:len(b)/2] })
		}, "cut short", 0},
		{"output extended", false, func(t *testing.T, r txnRun) {
			mutate(t, r.path("out.csv"), func(b []byte) []byte { return append(b, "9,9\n"...) })
		}, "extended", 0},
		{"output byte flipped", false, func(t *testing.T, r txnRun) { mutate(t, r.path("out.csv"), flip) }, "does not match", 0},
		{"output deleted", false, func(t *testing.T, r txnRun) { os.Remove(r.path("out.csv")) }, "missing", 0},
		{"staged part deleted", false, func(t *testing.T, r txnRun) { os.Remove(r.path(part3)) }, "staged", 0},
		{"staged part byte flipped", false, func(t *testing.T, r txnRun) { mutate(t, r.path(part3), flip) }, "staged", 0},
		{"final output cut short", true, func(t *testing.T, r txnRun) {
			mutate(t, r.path("out.csv"), func(b []byte) []byte { return b[:len(b)-100] })
		}, "cut short", 0},
		{"final commit record deleted", true, func(t *testing.T, r txnRun) { os.Remove(r.path("out.csv.clink-commit")) }, "commit record", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newTxnRun(t, tc.final)
			tc.damage(t, r)
			before, _ := os.ReadFile(r.path("out.csv"))
			restore := cmp.Or(tc.restore, 3)
			s, err := r.resume(t, restore)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("resume: %v", err)
				}
				defer s.Close()
				if err := s.Finish(); err != nil {
					t.Fatal(err)
				}
				if got, _ := os.ReadFile(r.path("out.csv")); !bytes.Equal(got, r.want[restore]) {
					t.Fatalf("output %d bytes, want %d", len(got), len(r.want[restore]))
				}
				return
			}
			if err == nil {
				complete := s.Complete()
				s.Close()
				t.Fatalf("resumed a damaged sink (complete=%v)", complete)
			}
			if !errors.Is(err, state.ErrCorrupt) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q: want state.ErrCorrupt and %q", err, tc.want)
			}
			after, _ := os.ReadFile(r.path("out.csv"))
			if !bytes.Equal(before, after) {
				t.Fatalf("the refused resume changed the output: %d bytes, was %d", len(after), len(before))
			}
			t.Logf("%v", err)
		})
	}
}

// TestTxnSinkLocked: a second writer of the same output is fenced before
// it touches anything, until the first closes.
func TestTxnSinkLocked(t *testing.T) {
	dir := t.TempDir()
	a, err := LockTxnFileSink(txnTable(), Env{BaseDir: dir}, []string{"k", "v"}, false, "q-a/r1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LockTxnFileSink(txnTable(), Env{BaseDir: dir}, []string{"k", "v"}, false, "q-a/r2"); !errors.Is(err, state.ErrFenced) ||
		!strings.Contains(err.Error(), "another process owns this query's checkpoints") || !strings.Contains(err.Error(), "q-a/r1") {
		t.Fatalf("second writer: %v, want fenced naming q-a/r1", err)
	}
	a.Close()
	b, err := LockTxnFileSink(txnTable(), Env{BaseDir: dir}, []string{"k", "v"}, false, "q-a/r2")
	if err != nil {
		t.Fatalf("after the first closed: %v", err)
	}
	b.Close()
}
