package parser

import (
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestParseSurface runs testdata/surface like TestParse: WITH, VALUES,
// column alias lists, DISTINCT ON, NATURAL JOIN, CREATE VIEW column lists,
// CURRENT_TIMESTAMP, and their errors.
func TestParseSurface(t *testing.T) {
	datadriven.RunTest(t, "testdata/surface", func(t *testing.T, d *datadriven.TestData) string {
		if d.Cmd != "parse" {
			d.Fatalf(t, "unknown directive %s", d.Cmd)
		}
		return parseAndRender(t, d.Input)
	})
}
