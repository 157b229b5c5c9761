package repl

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "clink/state/pools"
)

// TestRestoreRefusesEditedTable: a checkpoint's source positions carry the
// table's definition, so after the table's path (or schema) changes a
// --restore latest is refused with what changed, while a pacing option
// (rate) may change freely.
func TestRestoreRefusesEditedTable(t *testing.T) {
	dir := t.TempDir()
	var data strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&data, "%d,%d\n", i%7, i)
	}
	for _, f := range []string{"a.csv", "b.csv"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(data.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	state := "disagg-file://" + filepath.Join(dir, "state")
	script := func(table string) string {
		return table + "\nSELECT k, COUNT(*) FROM ev GROUP BY k;\n"
	}
	run := func(table, restore string) (string, error) {
		var out bytes.Buffer
		o := RunOptions{StateURI: state, Parallelism: 2, Format: FormatCSV, Final: true, BaseDir: dir,
			CheckpointInterval: 5 * time.Millisecond, Restore: restore}
		err := RunScript(context.Background(), o, script(table), &out)
		return out.String(), err
	}
	const ddl = `CREATE TABLE ev (k BIGINT, v BIGINT) WITH (connector = 'csv', path = '%s', rate = '%d');`
	first, err := run(fmt.Sprintf(ddl, "a.csv", 30000), "")
	if err != nil {
		t.Fatalf("first run: %v", err)
	}
	cases := []struct {
		name, table string
		want        string // "" : the restore succeeds with the first run's result
	}{
		{"path changed", fmt.Sprintf(ddl, "b.csv", 30000), "option path: 'a.csv' -> 'b.csv'"},
		{"column type changed", strings.Replace(fmt.Sprintf(ddl, "a.csv", 30000), "v BIGINT", "v DOUBLE", 1), "column v: BIGINT -> DOUBLE"},
		{"column added", strings.Replace(fmt.Sprintf(ddl, "a.csv", 30000), "v BIGINT", "v BIGINT, w BIGINT", 1), "column w added"},
		{"rate changed", fmt.Sprintf(ddl, "a.csv", 0), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := run(c.table, "latest")
			if c.want == "" {
				if err != nil || out != first {
					t.Fatalf("restore = %v\n%s\nwant\n%s", err, out, first)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "table ev changed") || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("restore after the edit = %v, want a refusal naming %q", err, c.want)
			}
		})
	}
}

// TestRestoreWritesNothing: resuming a query from a durable directory
// without checkpointing writes nothing there (probing for the newest run
// used to create the next run's directory), so a read-only copy of the
// state can be restored to inspect a result.
func TestRestoreWritesNothing(t *testing.T) {
	dir := t.TempDir()
	var data strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&data, "%d,%d\n", i%7, i)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.csv"), []byte(data.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, "state")
	script := "CREATE TABLE ev (k BIGINT, v BIGINT) WITH (connector = 'csv', path = 'a.csv', rate = '30000');\nSELECT k, COUNT(*) FROM ev GROUP BY k;\n"
	run := func(interval time.Duration, restore string) string {
		var out bytes.Buffer
		o := RunOptions{StateURI: "disagg-file://" + state, Parallelism: 2, Format: FormatCSV, Final: true, BaseDir: dir,
			CheckpointInterval: interval, Restore: restore}
		if err := RunScript(context.Background(), o, script, &out); err != nil {
			t.Fatalf("run (restore %q): %v", restore, err)
		}
		return out.String()
	}
	listing := func() string {
		var b strings.Builder
		err := filepath.WalkDir(state, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, "%s %d %v\n", p, fi.Size(), fi.ModTime())
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	first := run(5*time.Millisecond, "")
	before := listing()
	if got := run(0, "latest"); got != first {
		t.Fatalf("restored result %q, want %q", got, first)
	}
	if after := listing(); after != before {
		t.Fatalf("the restore wrote to the state directory:\nbefore\n%s\nafter\n%s", before, after)
	}
}
