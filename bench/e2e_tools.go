package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// awkGroupBy is the GROUP BY as an awk program a user would type.
const awkGroupBy = `NR > 1 { c[$1]++; s[$1] += $2; if (!($1 in m) || $2 > m[$1]) m[$1] = $2 }
END { for (k in c) print k "," c[k] "," s[k] "," m[k] }`

// runTool runs name with args (in dir when set), its stdout written to
// out, and returns how long it took. extraEnv is added to the environment.
func runTool(ctx context.Context, dir, out string, extraEnv []string, name string, args ...string) (time.Duration, error) {
	f, err := os.Create(out)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	defer f.Close()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, f, &stderr
	cmd.Env = append(os.Environ(), extraEnv...)
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("%s: %w: %s", filepath.Base(name), err, tail(stderr.String(), 400))
	}
	d := time.Since(start)
	if err := f.Close(); err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	return d, nil
}

// tail is the last n bytes of s.
func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// findOctoSQL returns an octosql binary on PATH or in $CLINK_TOOLS/bin
// (default ~/.cache/clink/bin, where `scripts/octosql.sh build` puts it),
// or why there is none.
func findOctoSQL() (string, error) {
	if p, err := exec.LookPath("octosql"); err == nil {
		return p, nil
	}
	tools := os.Getenv("CLINK_TOOLS")
	if home, err := os.UserHomeDir(); tools == "" && err == nil {
		tools = filepath.Join(home, ".cache", "clink")
	}
	if tools != "" {
		p := filepath.Join(tools, "bin", "octosql")
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, nil
		}
	}
	return "", errors.New("no octosql binary on PATH or in ~/.cache/clink/bin (install: scripts/octosql.sh build)")
}

// octoSQLGroupBy runs the GROUP BY through OctoSQL over in (the file name
// is its table; it reads the CSV header), writing CSV to out.
func octoSQLGroupBy(ctx context.Context, bin string, in e2eInput, out string) (time.Duration, error) {
	q := fmt.Sprintf("SELECT k, COUNT(*), SUM(v), MAX(v) FROM %s GROUP BY k", filepath.Base(in.path))
	return runTool(ctx, filepath.Dir(in.path), out, []string{"OCTOSQL_NO_TELEMETRY=1"}, bin, q, "--output", "csv")
}

// memstatRE matches the peak RSS line `clink run` prints with
// CLINK_MEMSTATS=1.
var memstatRE = regexp.MustCompile(`clink-memstats VmHWM: (\d+) kB`)

// childRSS runs `clink run -f script` as a child process of bin in dir
// with CLINK_MEMSTATS=1 and without GOMEMLIMIT/GOGC from this
// environment (a user's defaults), stdout to out, and returns the child's
// peak RSS in bytes (VmHWM) and its wall time. A child still running
// after limit has its VmHWM read from /proc and is killed: the peak is
// then a lower bound, and timedOut says so.
func childRSS(ctx context.Context, bin, dir, script, out string, limit time.Duration, args ...string) (rss int64, d time.Duration, timedOut bool, err error) {
	sql := filepath.Join(dir, fmt.Sprintf("q-%d.sql", time.Now().UnixNano()))
	if err := os.WriteFile(sql, []byte(script), 0o644); err != nil {
		return 0, 0, false, fmt.Errorf("rss child: %w", err)
	}
	defer os.Remove(sql)
	f, err := os.Create(out)
	if err != nil {
		return 0, 0, false, fmt.Errorf("rss child: %w", err)
	}
	defer f.Close()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, append([]string{"run", "-f", sql}, args...)...)
	cmd.Dir, cmd.Stdout, cmd.Stderr, cmd.Env = dir, f, &stderr, childEnv()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, 0, false, fmt.Errorf("rss child: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case err = <-done:
	case <-timer.C:
		rss, _ = procHWM(cmd.Process.Pid)
		cmd.Process.Kill()
		<-done
		return rss, time.Since(start), true, nil
	}
	d = time.Since(start)
	if err != nil {
		return 0, 0, false, fmt.Errorf("rss child %s run %s: %w: %s", bin, strings.Join(args, " "), err, tail(stderr.String(), 400))
	}
	m := memstatRE.FindStringSubmatch(stderr.String())
	if m == nil {
		return 0, 0, false, fmt.Errorf("rss child: no clink-memstats VmHWM line in its stderr: %s", tail(stderr.String(), 400))
	}
	kb, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		return 0, 0, false, fmt.Errorf("rss child: %w", err)
	}
	return kb << 10, d, false, nil
}

// childEnv is this environment less GOMEMLIMIT, GOGC and CLINK_MEMSTATS,
// plus CLINK_MEMSTATS=1.
func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GOMEMLIMIT=") && !strings.HasPrefix(kv, "GOGC=") && !strings.HasPrefix(kv, "CLINK_MEMSTATS=") {
			env = append(env, kv)
		}
	}
	return append(env, "CLINK_MEMSTATS=1")
}

// procHWM reads a running process's peak RSS (VmHWM) from /proc.
func procHWM(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	m := regexp.MustCompile(`VmHWM:\s+(\d+) kB`).FindSubmatch(data)
	if m == nil {
		return 0, errors.New("no VmHWM")
	}
	kb, err := strconv.ParseInt(string(m[1]), 10, 64)
	return kb << 10, err
}
