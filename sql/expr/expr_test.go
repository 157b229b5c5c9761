package expr

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"clink/sql/ast"
	"clink/sql/parser"
	"clink/sql/types"
)

// testSchema has two tables' worth of columns; t.a and u.a make "a"
// ambiguous.
var testSchema = NewSchema(
	Column{Table: "t", Name: "a", Type: types.BigInt},
	Column{Table: "t", Name: "i", Type: types.Int},
	Column{Table: "t", Name: "d", Type: types.Decimal(10, 2)},
	Column{Table: "t", Name: "f", Type: types.Double},
	Column{Table: "t", Name: "s", Type: types.Varchar},
	Column{Table: "t", Name: "ts", Type: types.Timestamp},
	Column{Table: "t", Name: "flag", Type: types.Bool},
	Column{Table: "u", Name: "a", Type: types.BigInt},
	Column{Table: "u", Name: "n", Type: types.BigInt},
)

// testRows: row 1 has values, row 2 is all NULL.
var testRows = []types.Row{
	{types.NewBigInt(7), types.NewInt(3), types.NewDecimal(1250, 2), types.NewDouble(2.5),
		types.NewVarchar("Hello, World"), types.NewTimestamp(1436918401001), types.NewBool(true),
		types.NewBigInt(-1), types.NewBigInt(0)},
	make(types.Row, 9),
}

// TestEval runs the files under testdata (eval, numeric): "eval" compiles
// the input against testSchema and prints "TYPE: value-on-row-1 |
// value-on-row-2".
func TestEval(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) { runEval(t, path) })
}

func runEval(t *testing.T, path string) {
	datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
		if d.Cmd != "eval" {
			d.Fatalf(t, "unknown directive %s", d.Cmd)
		}
		src := strings.TrimSpace(d.Input)
		e, err := parser.ParseExpr(src)
		if err != nil {
			return err.(*ast.Error).Render(src) + "\n"
		}
		c, err := Compile(e, testSchema)
		if err != nil {
			return err.(*ast.Error).Render(src) + "\n"
		}
		var outs []string
		for _, r := range testRows {
			v, err := c.Eval(r)
			if err != nil {
				outs = append(outs, "error: "+err.Error())
				continue
			}
			outs = append(outs, v.String())
		}
		return fmt.Sprintf("%s: %s\n", c.Type(), strings.Join(outs, " | "))
	})
}
