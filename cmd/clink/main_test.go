package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestDispatch(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		wantOut []string
		wantErr string
	}{
		{"help lists commands", []string{"help"}, []string{"usage: clink", "demo"}, ""},
		{"--help lists commands", []string{"--help"}, []string{"usage: clink", "commands:", "  repl ", "  run ", "  serve ", `\help lists its backslash commands`}, ""},
		{"-h lists commands", []string{"-h"}, []string{"usage: clink", "  notebook "}, ""},
		{"help COMMAND shows its flags", []string{"help", "run"}, []string{"Usage of run:", "  -final"}, ""},
		{"unknown command", []string{"frobnicate"}, nil, `unknown command "frobnicate"`},
		{"unknown command, near one", []string{"sever"}, nil, `unknown command "sever" (did you mean serve?)`},
		{"demo on memory", []string{"demo", "-state", "memory://", "-records", "400", "-sync-records", "200", "-keys", "50", "-parallelism", "2"},
			[]string{"sync", "async", "records/s", "async / sync throughput"}, ""},
		{"demo on simulated remote tier", []string{"demo", "-records", "400", "-sync-records", "20", "-keys", "50", "-parallelism", "2"},
			[]string{"cold misses", "async / sync throughput"}, ""},
		{"demo bad state uri", []string{"demo", "-state", "s4://x"}, nil, `unknown scheme "s4"`},
		{"demo bad flag value", []string{"demo", "-keys", "-3"}, nil, "--keys -3: must not be negative"},
		{"demo zero flag value", []string{"demo", "-keys", "0"}, nil, "-keys must be positive"},
		{"run negative duration", []string{"run", "--checkpoint-interval", "-1s", "-e", "SELECT 1"}, nil, "--checkpoint-interval -1s: must not be negative"},
		{"demo stray argument", []string{"demo", "extra"}, nil, `unexpected argument "extra"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := dispatch(tc.args, &out, &errOut)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("err = %v (stderr %s)", err, errOut.String())
			}
			for _, w := range tc.wantOut {
				if !strings.Contains(out.String(), w) {
					t.Fatalf("output lacks %q:\n%s", w, out.String())
				}
			}
		})
	}
}

// TestUsageOneDefault: the command list marks exactly one command as the
// default, the one clink runs without a command.
func TestUsageOneDefault(t *testing.T) {
	var out bytes.Buffer
	usage(&out)
	if n := strings.Count(out.String(), "default"); n != 1 {
		t.Errorf("usage mentions a default %d times, want once:\n%s", n, out.String())
	}
	if !strings.Contains(out.String(), "  repl       interactive SQL shell (the default)") {
		t.Errorf("usage does not mark repl as the default:\n%s", out.String())
	}
}
