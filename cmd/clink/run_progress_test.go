package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/creack/pty"
)

// progressScript writes a csv of rows lines and a script counting it per
// region; it returns the script's path.
func progressScript(t *testing.T, rows int) string {
	t.Helper()
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("id,region,amount\n")
	for i := range rows {
		fmt.Fprintf(&b, "%d,r%d,%d\n", i, i%7, i%100)
	}
	if err := os.WriteFile(filepath.Join(dir, "big.csv"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "big.sql")
	sql := "CREATE TABLE big (id BIGINT, region VARCHAR, amount BIGINT) WITH (connector = 'csv', path = 'big.csv', header = 'true');\n" +
		"SELECT region, COUNT(*) AS n FROM big GROUP BY region;\n"
	if err := os.WriteFile(script, []byte(sql), 0o644); err != nil {
		t.Fatal(err)
	}
	return script
}

// progressResult is what the script prints on stdout.
const progressResult = "region,n\nr0,71429\nr1,71429\nr2,71429\nr3,71429\nr4,71428\nr5,71428\nr6,71428\n"

// TestRunProgress runs `clink run` over a file large enough to take
// several redraws: with stderr a terminal the progress line (bar, bytes
// of the total, rows/s) appears there and is erased at the end; piped,
// stderr stays empty. stdout is the result alone either way.
func TestRunProgress(t *testing.T) {
	bin := clinkBinary(t)
	script := progressScript(t, 500000)
	args := []string{"run", "-f", script, "--final", "--format", "csv"}

	t.Run("terminal", func(t *testing.T) {
		ptmx, tty, err := pty.Open()
		if err != nil {
			t.Fatalf("no pseudo-terminal: %v", err)
		}
		defer ptmx.Close()
		if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 24, Cols: 100}); err != nil {
			t.Fatal(err)
		}
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "NO_COLOR=1")
		cmd.Stdout, cmd.Stderr = &stdout, tty
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			io.Copy(&stderr, ptmx) // ends with EIO once the child and tty are closed
		}()
		err = cmd.Run()
		tty.Close()
		wg.Wait()
		if err != nil {
			t.Fatalf("clink run: %v\n%s", err, stderr.String())
		}
		if stdout.String() != progressResult {
			t.Errorf("stdout = %q, want %q", stdout.String(), progressResult)
		}
		got := stderr.String()
		for _, want := range []string{"\r#", "% ", " MiB of ", " rows/s"} {
			if !strings.Contains(got, want) {
				t.Errorf("terminal stderr lacks %q: %q", want, got)
			}
		}
		if !strings.HasSuffix(got, "\r\x1b[K") {
			t.Errorf("progress line not erased at the end: %q", got[max(len(got)-80, 0):])
		}
	})

	t.Run("piped", func(t *testing.T) {
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(bin, args...)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("clink run: %v\n%s", err, stderr.String())
		}
		if stdout.String() != progressResult {
			t.Errorf("stdout = %q, want %q", stdout.String(), progressResult)
		}
		if stderr.Len() != 0 {
			t.Errorf("piped stderr = %q, want nothing", stderr.String())
		}
	})
}
