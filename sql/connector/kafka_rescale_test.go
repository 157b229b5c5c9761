package connector

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"clink/engine"
	"clink/sql/ast"
	"clink/sql/expr"
	"clink/sql/types"
)

// readCut reads about cut rows from each of a table's subtasks at
// parallelism par and returns the rows and each subtask's position.
func readCut(t *testing.T, tab *Table, par, cut int) ([]string, [][]byte) {
	t.Helper()
	var got []string
	pos := make([][]byte, par)
	for sub := 0; sub < par; sub++ {
		src, err := openKafka(tab, Env{Subtask: sub, Parallelism: par})
		if err != nil {
			t.Fatal(err)
		}
		for n := 0; n < cut; {
			el, ok, err := src.Next()
			if err != nil {
				t.Fatal(err)
			}
			if el.Kind == engine.EndOfInput {
				break
			}
			if ok && el.Kind == engine.Data {
				got = append(got, el.Data.Row[0].String()+","+el.Data.Row[1].String())
				n++
			}
		}
		if pos[sub], err = src.Position(); err != nil {
			t.Fatal(err)
		}
		src.Close()
	}
	return got, pos
}

// TestKafkaSourceRescale reads part of a 5-partition topic at scan
// parallelism 2 and resumes it at 1, 3 and 4 subtasks, each given every
// old subtask's position (SeekAll): together the runs read every record
// up to the first run's bound exactly once.
func TestKafkaSourceRescale(t *testing.T) {
	for _, to := range []int{1, 3, 4} {
		for _, cut := range []int{0, 4, 100} {
			t.Run(fmt.Sprintf("to=%d/cut=%d", to, cut), func(t *testing.T) {
				addr := testKafka(t, 5, "t")
				produceKV(t, addr, "t", 0, 40)
				got, pos := readCut(t, kafkaTable(addr, "scan.parallelism", "2"), 2, cut)
				produceKV(t, addr, "t", 40, 50) // after the checkpoint: past its bound
				tab := kafkaTable(addr, "scan.parallelism", fmt.Sprint(to))
				for sub := 0; sub < to; sub++ {
					src, err := openKafka(tab, Env{Subtask: sub, Parallelism: to})
					if err != nil {
						t.Fatal(err)
					}
					if err := src.SeekAll(pos); err != nil {
						t.Fatal(err)
					}
					got = append(got, drain(t, src)...)
					src.Close()
				}
				slices.Sort(got)
				if want := wantRows(0, 40); !slices.Equal(got, want) {
					t.Fatalf("got %d rows %v\nwant %d", len(got), got, len(want))
				}
			})
		}
	}
}

// TestKafkaSourceSeekOwnOnly: Seek (a restore at the same parallelism)
// refuses a position that is not this subtask's assignment, instead of
// reading a partition twice or not at all.
func TestKafkaSourceSeekOwnOnly(t *testing.T) {
	addr := testKafka(t, 4, "t")
	produceKV(t, addr, "t", 0, 8)
	_, pos := readCut(t, kafkaTable(addr, "scan.parallelism", "2"), 2, 1)
	for _, c := range []struct {
		par, sub int
		pos      []byte
		want     string
	}{
		{4, 0, pos[0], "which this subtask does not"}, // reads 0 and 2, owns 0
		{1, 0, pos[0], "no offset for partition 1"},   // reads 0 and 2, owns all
		{2, 1, pos[0], "which this subtask does not"}, // another subtask's
	} {
		src, err := openKafka(kafkaTable(addr, "scan.parallelism", fmt.Sprint(c.par)), Env{Subtask: c.sub, Parallelism: c.par})
		if err != nil {
			t.Fatal(err)
		}
		err = src.Seek(c.pos)
		src.Close()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("par %d subtask %d: Seek = %v, want %q", c.par, c.sub, err, c.want)
		}
	}
}

// TestKafkaSourceRescaleWatermark: each partition's watermark is in the
// position, so a source restored at another parallelism starts at the
// minimum of its new partitions' watermarks instead of from nothing.
func TestKafkaSourceRescaleWatermark(t *testing.T) {
	addr := testKafka(t, 2, "t")
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	t0 := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < 5; i++ {
		for p, base := range []int{0, 10} {
			r := &kgo.Record{Topic: "t", Partition: int32(p), Value: []byte(`{"k":1,"v":1}`), Timestamp: t0.Add(time.Duration(base+i) * time.Second)}
			if err := cl.ProduceSync(context.Background(), r).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	table := func(par int) *Table {
		tab := kafkaTable(addr, "scan.bounded.mode", "unbounded", "scan.parallelism", fmt.Sprint(par))
		tab.Columns = append(tab.Columns, expr.Column{Name: "ts", Type: types.Timestamp})
		tab.Metadata = []string{"", "", "timestamp"}
		if tab.Watermark, err = expr.Compile(&ast.ColumnRef{Name: "ts"}, tab.Schema("")); err != nil {
			t.Fatal(err)
		}
		return tab
	}
	_, pos := readCut(t, table(2), 2, 5) // each subtask reads its partition to the end
	src, err := openKafka(table(1), Env{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if err := src.SeekAll(pos); err != nil {
		t.Fatal(err)
	}
	el, ok, err := src.Next()
	if want := t0.Add(4 * time.Second).UnixMilli(); err != nil || !ok || el.Kind != engine.Watermark || el.Watermark != want {
		t.Fatalf("first element after the restore: %+v ok=%v err=%v, want watermark %d (partition 0's)", el, ok, err, want)
	}
}
