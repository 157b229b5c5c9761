package stateuri

import (
	"strings"
	"testing"
)

// TestRedact: every parameter named like a credential, and the user info,
// is hidden; other parameters stay readable.
func TestRedact(t *testing.T) {
	for _, in := range []string{
		"remote-read://b/p?endpoint=http://127.0.0.1:8333&secret_access_key=s3cr3t",
		"remote-read://b/p?access_key_id=s3cr3t",
		"remote-read://b/p?session_token=s3cr3t",
		"remote-read://b/p?passwd=s3cr3t",
		"remote-read://b/p?auth=s3cr3t",
		"remote-read://user:s3cr3t@b/p",
	} {
		got := Redact(in)
		if strings.Contains(got, "s3cr3t") || !strings.Contains(got, "REDACTED") {
			t.Errorf("Redact(%q) = %q", in, got)
		}
	}
	if got := Redact("disagg-local://?latency=uniform(0.5ms,2ms)"); got != "disagg-local://?latency=uniform(0.5ms,2ms)" {
		t.Errorf("a URI without credentials changed: %q", got)
	}
	if got := Redact("remote-read://b/p?endpoint=http://x&key=k"); !strings.Contains(got, "endpoint=http://x") {
		t.Errorf("endpoint not readable: %q", got)
	}
}
