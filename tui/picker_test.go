package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

func TestPicker(t *testing.T) {
	items := []PickItem{{"q1", "SELECT a"}, {"q2", "SELECT b"}, {"q3", "SELECT c"}}
	cases := []struct {
		keys   []string
		chosen int
		ok     bool
		cursor string // the line the cursor is on
	}{
		{[]string{"enter"}, 0, true, "▶ q1"},
		{[]string{"j", "j", "enter"}, 2, true, "▶ q3"},
		{[]string{"j", "j", "j", "j", "k", "enter"}, 1, true, "▶ q2"},
		{[]string{"k", "enter"}, 0, true, "▶ q1"},
		{[]string{"j", "q"}, 1, false, "▶ q2"},
		{[]string{"esc"}, 0, false, "▶ q1"},
	}
	for _, c := range cases {
		p := NewPicker("jobs on 127.0.0.1:9249", items)
		for _, k := range c.keys {
			p.Update(keyPress(k))
		}
		i, ok := p.Chosen()
		if i != c.chosen || ok != c.ok {
			t.Errorf("keys %v: chosen %d %v, want %d %v", c.keys, i, ok, c.chosen, c.ok)
		}
		scr := ansi.Strip(p.View().Content)
		if !strings.Contains(scr, c.cursor) || !strings.Contains(scr, "jobs on 127.0.0.1:9249") || strings.Count(scr, "▶") != 1 {
			t.Errorf("keys %v: screen\n%s\nwant the cursor on %q", c.keys, scr, c.cursor)
		}
	}
	empty := NewPicker("none", nil)
	empty.Update(keyPress("enter"))
	if _, ok := empty.Chosen(); ok {
		t.Error("an empty list picked something")
	}
}
