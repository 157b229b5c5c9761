// Package e2e holds clink's end-to-end durability tests: they build the
// real binary and drive it as a user would (kill -9 and resume, remote
// outages, memory bounds). See docs/durability.md.
package e2e

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// soak lengthens the kill -9 and fault soak tests (`make soak`).
var soak = flag.Duration("soak", 0, "run the kill -9 and fault soaks this long (0: the bounded form)")

var (
	buildOnce sync.Once
	binPath   string
	binDir    string
	buildErr  error
)

func TestMain(m *testing.M) {
	flag.Parse()
	code := report.finish(m.Run())
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// clinkBinary builds cmd/clink once per test binary, or returns
// $CLINK_E2E_BIN when set (a build from elsewhere, e.g. a deliberately
// broken one to see a test fail).
func clinkBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		if bin := os.Getenv("CLINK_E2E_BIN"); bin != "" {
			binPath, buildErr = filepath.Abs(bin)
			return
		}
		binDir, buildErr = os.MkdirTemp("", "clink-e2e")
		if buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "clink")
		out, err := exec.Command("go", "build", "-o", binPath, "../cmd/clink").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("%v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatalf("building clink: %v", buildErr)
	}
	return binPath
}

// proc is one started `clink run`.
type proc struct {
	cmd    *exec.Cmd
	out    bytes.Buffer
	exited chan struct{} // closed when the process exited; err is then set
	err    error
}

// start runs clink with args in dir, with extra environment.
func start(t *testing.T, dir string, env []string, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(clinkBinary(t), args...), exited: make(chan struct{})}
	p.cmd.Dir = dir
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start clink: %v", err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.exited
	})
	return p
}

// wait waits for the process to exit (killing it and failing after d).
func (p *proc) wait(t *testing.T, d time.Duration) error {
	t.Helper()
	select {
	case <-p.exited:
		return p.err
	case <-time.After(d):
		_ = p.cmd.Process.Kill()
		<-p.exited
		t.Fatalf("clink did not finish within %s:\n%s", d, p.output())
		return nil
	}
}

// output is what the process printed (call after it exited).
func (p *proc) output() string { return p.out.String() }

// killAfter SIGKILLs the process after d unless it exits first; it reports
// whether the process was killed.
func (p *proc) killAfter(d time.Duration) bool {
	select {
	case <-p.exited:
		return false
	case <-time.After(d):
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.exited
		return true
	}
}

// diffRows reports how two sorted multisets differ.
func diffRows(want, got []string) string {
	if len(want) == len(got) {
		same := true
		for i := range want {
			if want[i] != got[i] {
				same = false
				break
			}
		}
		if same {
			return ""
		}
	}
	w, g := map[string]int{}, map[string]int{}
	for _, r := range want {
		w[r]++
	}
	for _, r := range got {
		g[r]++
	}
	var b strings.Builder
	fmt.Fprintf(&b, "want %d rows, got %d", len(want), len(got))
	n := 0
	for r, c := range w {
		if g[r] != c && n < 10 {
			fmt.Fprintf(&b, "\n  %s: want %d, got %d", r, c, g[r])
			n++
		}
	}
	for r, c := range g {
		if w[r] == 0 && n < 20 {
			fmt.Fprintf(&b, "\n  %s: unexpected x%d", r, c)
			n++
		}
	}
	return b.String()
}

// s3Env returns the state URI of a fresh prefix on the CI S3 server and the
// environment the child needs, or skips naming why.
func s3Env(t *testing.T, prefix string) (string, []string) {
	t.Helper()
	ep := os.Getenv("CLINK_S3_ENDPOINT")
	if ep == "" {
		t.Skip("CLINK_S3_ENDPOINT is not set: start the S3 server (scripts/s3.sh start; eval \"$(scripts/s3.sh env)\")")
	}
	bucket := os.Getenv("CLINK_S3_BUCKET")
	uri := fmt.Sprintf("remote-read://%s/%s-%d?endpoint=%s", bucket, prefix, time.Now().UnixNano(), ep)
	return uri, []string{
		"AWS_ACCESS_KEY_ID=" + os.Getenv("CLINK_S3_ACCESS_KEY"),
		"AWS_SECRET_ACCESS_KEY=" + os.Getenv("CLINK_S3_SECRET_KEY"),
	}
}

// deadline is a context for a whole test, from -timeout.
func deadline(t *testing.T) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	if d, ok := t.Deadline(); ok {
		ctx, cancel = context.WithDeadline(context.Background(), d.Add(-10*time.Second))
	}
	t.Cleanup(cancel)
	return ctx
}
