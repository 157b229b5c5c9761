package e2e

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"clink/repl"
	"clink/state/stateuri"
	"clink/tui"
)

// secretURIs carry credentials where a careless user might put them.
var secretURIs = []string{
	"remote-read://AKIDINURI:SECRETINURI@clink-test/p?endpoint=http://127.0.0.1:1",
	"remote-read://clink-test/p?endpoint=http://127.0.0.1:1&secret_access_key=SECRETINQUERY",
	"disagg-local://?aws_session_token=SECRETTOKEN",
}

var secretWords = []string{"SECRETINURI", "SECRETINQUERY", "SECRETTOKEN", "SECRETFROMENV", "AKIDINURI"}

func assertNoSecret(t *testing.T, where, out string) {
	t.Helper()
	for _, w := range secretWords {
		if strings.Contains(out, w) {
			t.Errorf("%s shows the secret %s:\n%s", where, w, out)
		}
	}
}

// TestSecretsRedacted checks that S3 credentials never reach what a user
// or a log sees: the redaction used by EXPLAIN, errors, \set and the TUI
// header, and the real binary's output for EXPLAIN, a failing query, the
// REPL's \set listing and a bad URI.
func TestSecretsRedacted(t *testing.T) {
	for _, uri := range secretURIs {
		assertNoSecret(t, "stateuri.Redact", stateuri.Redact(uri))
		assertNoSecret(t, "repl.RedactURI", repl.RedactURI(uri))
		assertNoSecret(t, "tui.RedactURI", tui.RedactURI(uri))
		_, _, err := stateuri.Parse(uri)
		if err != nil {
			assertNoSecret(t, "stateuri.Parse error", err.Error())
		}
	}
	if testing.Short() {
		return
	}
	env := []string{"AWS_ACCESS_KEY_ID=AKIDFROMENV", "AWS_SECRET_ACCESS_KEY=SECRETFROMENV", "AWS_SESSION_TOKEN=SECRETFROMENV"}
	dir := t.TempDir()
	for _, uri := range secretURIs {
		script := "CREATE TABLE t (k INT); EXPLAIN SELECT k, COUNT(*) FROM t GROUP BY k; INSERT INTO t VALUES (1); SELECT k, COUNT(*) FROM t GROUP BY k;"
		p := start(t, dir, env, "run", "--state", uri, "--checkpoint-interval", "10ms", "-e", script)
		_ = p.wait(t, 2*time.Minute)
		assertNoSecret(t, "clink run", p.output())
		p = start(t, dir, env, "run", "--state", uri, "--restore", "latest", "-e", script)
		_ = p.wait(t, 2*time.Minute)
		assertNoSecret(t, "clink run --restore", p.output())

		cmd := exec.Command(clinkBinary(t), "repl", "--state", uri)
		cmd.Dir = dir
		cmd.Env = append(cmd.Environ(), env...)
		cmd.Stdin = strings.NewReader("\\set\n\\explain SELECT 1 AS x FROM (VALUES (1)) AS v(a);\n")
		out, _ := cmd.CombinedOutput()
		assertNoSecret(t, "clink repl \\set", string(out))
	}
}
