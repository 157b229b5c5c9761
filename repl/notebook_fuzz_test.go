package repl

import "testing"

// FuzzNotebook parses arbitrary Markdown as a notebook: no panic, and
// rendering is stable (render, parse, render gives the same text and
// cells), so saving a notebook never corrupts it. Cell contents go through
// the command splitter too.
func FuzzNotebook(f *testing.F) {
	for _, s := range []string{
		"# t\n\n```sql\nSELECT 1;\n```\n\n```text\n1\n```\n",
		"```sql error\nSELEC 1;\n```\n",
		"```sql\n\\set mode changelog\nSELECT 'a;b' -- c;\n;\n```\n```text\n```\n",
		"````sql\n```\n````\n",
		"```sql",
		"text\n```text\nx\n```\n```sql\n/* ; */ SELECT 1\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		nb := ParseNotebook(src)
		for _, c := range nb.Cells() {
			_ = c.ExpectError()
			_ = SplitCommands(c.SQL)
		}
		once := nb.String()
		again := ParseNotebook(once)
		if twice := again.String(); twice != once {
			t.Fatalf("render is not stable:\n--- once\n%q\n--- twice\n%q", once, twice)
		}
		if len(again.Cells()) != len(nb.Cells()) {
			t.Fatalf("cells: %d, after a round trip %d", len(nb.Cells()), len(again.Cells()))
		}
	})
}
