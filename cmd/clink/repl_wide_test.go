package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestLiveTableFitsTerminal runs a live table over an endless source in
// terminals of several sizes, with results narrower and much wider than
// the terminal, stops it, and replays the output through a terminal
// emulator: the in-place redraws must leave exactly one copy of the
// header (none piled up in scrollback), no line may wrap, and stopping
// must leave one final rendering that fits the screen, not the whole
// result.
func TestLiveTableFitsTerminal(t *testing.T) {
	for _, tc := range []struct {
		name       string
		rows, cols uint16
		counts     int    // COUNT(*) columns beside the key
		expanded   string // \x setting
		scroll     bool   // press > and expect the columns to scroll
		header     string // a regexp matching one line of each header
	}{
		{"narrow result, 80x24", 24, 80, 2, "off", false, `(?m)^-+\+-`},
		{"80 columns, 80x24", 24, 80, 79, "off", true, `(?m)^-+\+-`},
		{"80 columns, 120x40", 40, 120, 79, "off", true, `(?m)^-+\+-`},
		{"80 columns expanded, 80x24", 24, 80, 79, "on", false, `(?m)^-\[ RECORD 1 \]`},
		{"80 columns auto expanded, 80x24", 24, 80, 79, "auto", false, `(?m)^-\[ RECORD 1 \]`},
		{"narrow auto, 80x24", 24, 80, 2, "auto", false, `(?m)^-+\+-`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startPTYSize(t, filepath.Join(t.TempDir(), "history"), tc.rows, tc.cols)
			p.send("CREATE TABLE bid (auction BIGINT, price BIGINT) WITH (connector = 'nexmark');\r")
			p.expect("created table bid")
			p.expect("clink>")
			cols := []string{"auction AS akey"}
			for i := range tc.counts {
				cols = append(cols, fmt.Sprintf("COUNT(*) AS n%d", i+1))
			}
			p.send("CREATE VIEW wide AS SELECT " + strings.Join(cols, ", ") + " FROM bid GROUP BY auction;\r")
			p.expect("created view wide")
			p.expect("clink>")
			p.send("\\x " + tc.expanded + "\r")
			p.expect("expanded = " + tc.expanded)
			p.expect("clink>")
			m := p.mark()
			p.send("SELECT * FROM wide;\r")
			p.expect("changes")
			time.Sleep(1500 * time.Millisecond) // about ten redraws
			if tc.scroll {
				p.send(">")
				p.expect("columns 2-")
				time.Sleep(300 * time.Millisecond)
			}
			p.send("\x03")
			p.expect("query stopped")
			p.expect("clink>")
			scr := newScreen(int(tc.cols), int(tc.rows))
			scr.write(p.since(m))
			text := strings.TrimLeft(scr.text(), "\n")
			headers := regexp.MustCompile(tc.header).FindAllStringIndex(text, -1)
			if len(headers) != 1 {
				t.Errorf("%d copies of the header in the terminal, want 1:\n%s", len(headers), head(text, 40))
			}
			if n := strings.Count(text, "\n") + 1; n > int(tc.rows) {
				t.Errorf("the stopped query left %d lines, more than the %d-line screen:\n%s", n, tc.rows, head(text, 40))
			}
			if !strings.Contains(text, "query stopped after") {
				t.Errorf("no stop message:\n%s", head(text, 40))
			}
			p.send("\\q\r")
			waitExit(t, p)
		})
	}
}

// head is the first n lines of s.
func head(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n")
}
