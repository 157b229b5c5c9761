package connector

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"clink/sql/expr"
	"clink/sql/ops"
	"clink/sql/types"
)

// TestTxnFileSinkStreamsToDisk: changes between barriers go to a staged
// file as they come (the sink holds a buffer, not the output), and each
// checkpoint publishes exactly its changes, in order.
func TestTxnFileSinkStreamsToDisk(t *testing.T) {
	dir := t.TempDir()
	tbl := &Table{Name: "out", Connector: "csv", Options: map[string]string{"path": "out.csv", "header": "true"},
		Columns: []expr.Column{{Name: "k", Type: types.BigInt}, {Name: "v", Type: types.BigInt}}}
	s, err := OpenTxnFileSink(tbl, Env{BaseDir: dir}, []string{"k", "v"}, false, "run-1", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var want bytes.Buffer
	want.WriteString("k,v\n")
	write := func(from, to int) {
		for i := from; i < to; i++ {
			s.Write(ops.Change{Kind: ops.Insert, Row: types.Row{types.NewBigInt(int64(i)), types.NewBigInt(int64(i * 3))}})
			want.WriteString(strings.Join([]string{types.NewBigInt(int64(i)).String(), types.NewBigInt(int64(i * 3)).String()}, ",") + "\n")
		}
	}
	write(0, 100000)
	tmps, _ := filepath.Glob(filepath.Join(dir, "out.csv.clink-staging", ".tmp-*"))
	if len(tmps) != 1 {
		t.Fatalf("%d temporary parts before the barrier, want 1", len(tmps))
	}
	if st, err := os.Stat(tmps[0]); err != nil || st.Size() < 500000 {
		t.Fatalf("the changes are not on disk before the barrier: %v %v", st, err)
	}
	s.Barrier(1)
	if err := s.Committed(1); err != nil {
		t.Fatal(err)
	}
	write(100000, 100010)
	s.Barrier(2)
	write(100010, 100020) // after the last barrier: published by Finish
	if err := s.Committed(2); err != nil {
		t.Fatal(err)
	}
	if err := s.Finish(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "out.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("published %d bytes, want %d", len(got), want.Len())
	}
}
