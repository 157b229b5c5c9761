package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestRunExpressionErrors: `clink run` prints a query whose expression
// fails on some rows with NULL there and warns on stderr, positioned in
// the script; with SET 'expression.errors' = 'fail' the run fails there.
func TestRunExpressionErrors(t *testing.T) {
	const script = "CREATE TABLE t (k BIGINT); INSERT INTO t VALUES (1), (2), (3);\n" +
		"SELECT k, 6 / (k - 2) AS q FROM t;\n"
	tests := []struct {
		name, prefix, wantOut, wantErr, wantStderr string
	}{
		{"null", "", "k,q\n1,-6\n2,\n3,6\n", "",
			"clink: warning: statement 3: 1 expression error; first: 2:13: division by zero (in Project); SET 'expression.errors' = 'fail' fails the query instead\n"},
		{"fail", "SET 'expression.errors' = 'fail';\n", "", "-e:3:13: ERROR: division by zero", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := dispatch([]string{"run", "-e", tc.prefix + script, "--format", "csv", "--final", "--parallelism", "2"}, &out, &errOut)
			switch {
			case tc.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
			case err != nil:
				t.Fatalf("err = %v (stderr %s)", err, errOut.String())
			case out.String() != tc.wantOut || errOut.String() != tc.wantStderr:
				t.Fatalf("stdout %q, stderr %q; want %q, %q", out.String(), errOut.String(), tc.wantOut, tc.wantStderr)
			}
		})
	}
}
