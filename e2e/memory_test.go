package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// Memory-bound parameters: a GROUP BY over memKeys distinct keys with
// memHotPerBackend of hot tier per backend at parallelism memPar (one
// stateful stage), so the total hot budget is memHotPerBackend*memPar.
const (
	memKeys          = 60000
	memHotPerBackend = 128 << 10
	memPar           = 2
	// memEntryFloor is the hot tier's per-entry accounting overhead alone
	// (state.entryOverhead, the entry struct, map slot and dirty-list pointer): every key costs at least this much state.
	memEntryFloor = 128
	// Documented in docs/durability.md ("Memory bound").
	memBase    = 96 << 20 // heap besides the hot tiers
	memNonHeap = 32 << 20 // runtime: binary, stacks, GC metadata, unreturned pages
)

const memScript = `
CREATE TABLE g (k BIGINT, v BIGINT) WITH (connector = 'datagen', rows = '%d',
  'fields.k.kind' = 'sequence', 'fields.k.min' = '1', 'fields.k.max' = '%d',
  'fields.v.min' = '1', 'fields.v.max' = '1000');
CREATE TABLE out (k BIGINT, c BIGINT, s BIGINT) WITH (connector = 'csv', path = 'out.csv');
INSERT INTO out SELECT k, COUNT(*), SUM(v) FROM g GROUP BY k;
`

var memstatRE = regexp.MustCompile(`clink-memstats (GoMemLimit: (\d+)|VmHWM: (\d+) kB)`)

// TestMemoryBound runs `clink run` with keyed state at least ten times its
// total hot budget and checks the child's own peak RSS (VmHWM) against the
// documented bound: 2 x hot budget + 96 MiB (the soft memory limit the
// child derives) + 32 MiB of non-heap runtime memory.
func TestMemoryBound(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	hot := int64(memHotPerBackend * memPar)
	if state := int64(memKeys * memEntryFloor); state < 10*hot {
		t.Fatalf("state %d is less than ten times the hot budget %d", state, hot)
	}
	dir := t.TempDir()
	script := fmt.Sprintf(memScript, memKeys, memKeys)
	if err := os.WriteFile(filepath.Join(dir, "job.sql"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	uri := fmt.Sprintf("disagg-file://%s?hot_max_bytes=%d", filepath.Join(dir, "state"), memHotPerBackend)
	p := start(t, dir, []string{"CLINK_MEMSTATS=1", "GOMEMLIMIT="}, "run", "-f", "job.sql",
		"--parallelism", strconv.Itoa(memPar), "--state", uri, "--checkpoint-interval", "100ms")
	if err := p.wait(t, 2*time.Minute); err != nil {
		t.Fatalf("clink run: %v\n%s", err, p.output())
	}
	var limit, hwm int64
	for _, m := range memstatRE.FindAllStringSubmatch(p.output(), -1) {
		if m[2] != "" {
			limit, _ = strconv.ParseInt(m[2], 10, 64)
		} else {
			kb, _ := strconv.ParseInt(m[3], 10, 64)
			hwm = kb << 10
		}
	}
	if want := 2*hot + memBase; limit != want {
		t.Fatalf("soft memory limit %d, want 2 x %d + %d = %d\n%s", limit, hot, memBase, want, p.output())
	}
	bound := limit + memNonHeap
	t.Logf("peak RSS %.1f MiB, bound %.1f MiB (hot budget %d KiB, %d keys)", mib(hwm), mib(bound), hot>>10, memKeys)
	if hwm == 0 || hwm > bound {
		t.Fatalf("peak RSS %d bytes, bound %d (2 x hot %d + %d + %d)\n%s", hwm, bound, hot, memBase, memNonHeap, p.output())
	}
	if rows := len(readCSV(t, filepath.Join(dir, "out.csv"))); rows < memKeys {
		t.Fatalf("out.csv has %d rows, want at least %d", rows, memKeys)
	}
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }
