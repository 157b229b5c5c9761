package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const profileScript = "CREATE TABLE t (k INT); INSERT INTO t VALUES (1), (2), (1); SELECT k, COUNT(*) FROM t GROUP BY k;"

// TestRunProfiles: `clink run --cpuprofile F --memprofile G` writes both
// profiles as gzip-compressed protobufs (what go tool pprof reads) and
// still prints the result.
func TestRunProfiles(t *testing.T) {
	dir := t.TempDir()
	cpu, mem := filepath.Join(dir, "cpu.pprof"), filepath.Join(dir, "mem.pprof")
	var out, errOut bytes.Buffer
	err := dispatch([]string{"run", "-e", profileScript, "--format", "csv", "--final", "--cpuprofile", cpu, "--memprofile", mem}, &out, &errOut)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, errOut.String())
	}
	if !strings.Contains(out.String(), "1,2") {
		t.Errorf("result missing:\n%s", out.String())
	}
	for _, p := range []string{cpu, mem} {
		checkProfile(t, p)
	}
}

// checkProfile fails unless path is a non-empty gzip stream that
// decompresses to a non-empty body.
func checkProfile(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) < 2 || data[0] != 0x1f || data[1] != 0x8b {
		t.Fatalf("%s: %d bytes, not gzip", path, len(data))
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	body, err := io.ReadAll(zr)
	if err != nil || len(body) == 0 {
		t.Fatalf("%s: body of %d bytes, %v", path, len(body), err)
	}
}

// TestProfileBadPath: a profile file that cannot be created is a clear
// error before any work, for run and bench alike.
func TestProfileBadPath(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "no", "such", "dir", "p.pprof")
	cases := [][]string{
		{"run", "-e", profileScript, "--cpuprofile", bad},
		{"run", "-e", profileScript, "--memprofile", bad},
		{"bench", "--cpuprofile", bad, "observe"},
		{"bench", "--memprofile", bad, "observe"},
	}
	for _, args := range cases {
		var out, errOut bytes.Buffer
		err := dispatch(args, &out, &errOut)
		flag := args[len(args)-2]
		if args[0] == "bench" {
			flag = args[1]
		}
		if err == nil || !strings.Contains(err.Error(), flag) || !strings.Contains(err.Error(), "no such file or directory") {
			t.Errorf("%v: err = %v, want a %s error naming the missing directory", args, err, flag)
		}
		if out.Len() != 0 {
			t.Errorf("%v: output before the error:\n%s", args, out.String())
		}
	}
}
