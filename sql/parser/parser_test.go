package parser

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"clink/sql/ast"
)

// TestParse runs testdata/parse: directive "parse" with SQL as input; the
// output is each statement's canonical rendering or the caret error.
// Run with -rewrite to regenerate expected output.
func TestParse(t *testing.T) {
	datadriven.Walk(t, "testdata/parse", func(t *testing.T, path string) {
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "parse":
				return parseAndRender(t, d.Input)
			case "expr":
				e, err := ParseExpr(d.Input)
				if err != nil {
					return renderErr(d.Input, err)
				}
				return ast.String(e) + "\n"
			}
			d.Fatalf(t, "unknown directive %s", d.Cmd)
			return ""
		})
	})
}

func renderErr(src string, err error) string {
	if e, ok := AsError(err); ok {
		return e.Render(src) + "\n"
	}
	return "untyped error: " + err.Error() + "\n"
}

func parseAndRender(t *testing.T, src string) string {
	stmts, err := ParseScript(src)
	if err != nil {
		return renderErr(src, err)
	}
	var b strings.Builder
	for _, s := range stmts {
		out := ast.String(s.AST)
		fmt.Fprintln(&b, out)
		checkRoundTrip(t, out)
	}
	return b.String()
}

// checkRoundTrip asserts that the canonical rendering parses back to the
// same rendering.
func checkRoundTrip(t testing.TB, out string) {
	again, err := Parse(out)
	if err != nil {
		t.Fatalf("rendering does not parse: %v\n%s", err, out)
	}
	if got := ast.String(again); got != out {
		t.Fatalf("rendering not stable:\n first: %s\nsecond: %s", out, got)
	}
}
