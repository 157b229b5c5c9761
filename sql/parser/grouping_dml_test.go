package parser

import (
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestParseGroupingDML runs testdata/grouping_dml (GROUP BY ordinals,
// ROLLUP / CUBE / GROUPING SETS, DELETE and UPDATE) like TestParse: each
// statement's canonical rendering, which must parse back to itself, or the
// caret error. Run with -rewrite to regenerate expected output.
func TestParseGroupingDML(t *testing.T) {
	datadriven.RunTest(t, "testdata/grouping_dml", func(t *testing.T, d *datadriven.TestData) string {
		if d.Cmd != "parse" {
			d.Fatalf(t, "unknown directive %s", d.Cmd)
		}
		return parseAndRender(t, d.Input)
	})
}
