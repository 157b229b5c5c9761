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
		{"unknown command", []string{"frobnicate"}, nil, `unknown command "frobnicate"`},
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
