package scenarios

import (
	"errors"
	"os"
	"strings"
	"testing"
)

func TestParseErrors(t *testing.T) {
	cases := []struct {
		name, text, want string
	}{
		{"unbalanced", "config\n----\n\n  run steps=(1\n----\n", "f.scn:4:"},
		{"no separator", "run\n", "f.scn:1:1: directive \"run\" has no ---- line"},
		{"unclosed block", "run\n----\n----\nx\n", "f.scn:3:1: expected output of the directive at line 1"},
		{"junk after block", "run\n----\n----\nx\n----\n----\njunk\n", "f.scn:7:1: want a blank line"},
	}
	for _, c := range cases {
		_, err := Parse("f.scn", c.text)
		var pe *ParseError
		if !errors.As(err, &pe) || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: got %v, want prefix %q", c.name, err, c.want)
		}
	}
}

func TestExecErrors(t *testing.T) {
	cases := []struct{ text, want string }{
		{"bogus\n----\n", "f.scn:1:1: unknown directive \"bogus\""},
		{"config colour=red\n----\n", "f.scn:1:8: argument colour: unknown argument of config"},
		{"config parallelism=x\n----\n", "f.scn:1:8: argument parallelism: \"x\" is not an integer"},
		{"operator counter\n----\n\ninsert\na 1\nb two\n----\n", "f.scn:6:1: insert: want `key value`"},
		{"config latency=fast\n----\n", "f.scn:1:8: argument latency:"},
	}
	for _, c := range cases {
		f, err := Parse("f.scn", c.text)
		if err != nil {
			t.Fatalf("%q: %v", c.text, err)
		}
		_, err = Replay(f, 1)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: got %v, want prefix %q", c.text, err, c.want)
		}
	}
}

// TestRenderRoundTrip: rendering a file with its own expected outputs
// reproduces it byte for byte.
func TestRenderRoundTrip(t *testing.T) {
	files, err := Find(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range files {
		text, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := Parse(path, string(text))
		if err != nil {
			t.Fatal(err)
		}
		var outs []string
		for _, d := range f.Directives {
			outs = append(outs, d.Expected)
		}
		if got := f.Render(outs); got != string(text) {
			t.Errorf("%s: render differs from the file", path)
		}
	}
}

// TestDeterministic: the same file and seed give byte-identical outputs.
func TestDeterministic(t *testing.T) {
	files, err := Find(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range files {
		a, err := RunFile(path, 7, false)
		if err != nil {
			t.Fatal(err)
		}
		b, err := RunFile(path, 7, false)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(a.Outputs, "\x00") != strings.Join(b.Outputs, "\x00") {
			t.Errorf("%s: two replays differ", path)
		}
	}
}

// FuzzScenario: no scenario text panics the parser or the replayer; a
// malformed one is a *ParseError.
func FuzzScenario(f *testing.F) {
	files, _ := Find(".")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(string(b))
		}
	}
	for _, s := range []string{
		"run steps=(1\n----\n", "x a=(b,(c)\n----\n", "config latency=uniform(1ms,\n----\n",
		"operator counter\n----\n\nrestore parallelism=2 id=9\n----\n", "fault delay key=a\n----\n",
		"trace bogus\n----\n", "a \\\n", "----\n----\n", "config =x\n----\n", "results table raw by-key\n----\n",
		"operator counter\n----\n\ninsert\nk 9223372036854775807\nk 1\n----\n\nrun\n----\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 4096 {
			return
		}
		file, err := Parse("fuzz.scn", text)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("parse error is %T, not *ParseError: %v", err, err)
			}
			return
		}
		_, err = Replay(file, 1)
		var pe *ParseError
		if err != nil && !errors.As(err, &pe) {
			t.Fatalf("replay error is %T, not *ParseError: %v", err, err)
		}
	})
}
