// Package scenarios replays scenario files: readable, deterministic scripts
// of a clink run (configuration, operators, input, watermarks, checkpoints,
// crashes, restores, faults) with the expected output and runtime trace
// after each step. The format is cockroachdb/datadriven's; see README.md.
package scenarios

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cockroachdb/datadriven"
)

// Arg is one directive argument: a key and zero or more values.
type Arg = datadriven.CmdArg

// Directive is one step of a scenario file.
type Directive struct {
	File     string
	Line     int    // 1-based line of the directive
	Text     string // the directive line, continuation lines joined
	Cmd      string
	Args     []Arg
	Input    string // the input block, trimmed
	Expected string // the expected output; ends in a newline unless empty

	inputLine int      // line of the input block's first non-blank line
	pre       []string // verbatim lines (comments, blanks) before the directive
	raw       []string // the directive and input lines as written
}

// Pos is "file:line".
func (d *Directive) Pos() string { return fmt.Sprintf("%s:%d", d.File, d.Line) }

// File is a parsed scenario file.
type File struct {
	Name       string
	Directives []*Directive
	trailer    []string // verbatim lines after the last directive
}

// ParseError is a malformed scenario: where and why.
type ParseError struct {
	File      string
	Line, Col int
	Msg       string
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
}

// Parse reads a scenario file's text. It never panics; a malformed file
// gives a *ParseError naming file:line:col.
func Parse(name, text string) (*File, error) {
	lines := strings.Split(text, "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	p := &parser{name: name, lines: lines}
	f := &File{Name: name}
	var pre []string
	for p.i < len(p.lines) {
		line := p.lines[p.i]
		if t := strings.TrimSpace(line); t == "" || strings.HasPrefix(t, "#") {
			pre = append(pre, line)
			p.i++
			continue
		}
		d, err := p.directive()
		if err != nil {
			return nil, err
		}
		d.pre, pre = pre, nil
		f.Directives = append(f.Directives, d)
	}
	f.trailer = pre
	return f, nil
}

type parser struct {
	name  string
	lines []string
	i     int
}

func (p *parser) errAt(line, col int, format string, args ...any) error {
	return &ParseError{File: p.name, Line: line, Col: col, Msg: fmt.Sprintf(format, args...)}
}

// directive reads a directive line (with `\` continuations), its input
// block, the ---- separator and the expected output.
func (p *parser) directive() (*Directive, error) {
	start := p.i + 1
	first := p.lines[p.i]
	indent := len(first) - len(strings.TrimLeft(first, " \t"))
	d := &Directive{File: p.name, Line: start, raw: []string{first}}
	full := strings.TrimSpace(first)
	p.i++
	for strings.HasSuffix(full, `\`) && p.i < len(p.lines) {
		d.raw = append(d.raw, p.lines[p.i])
		full = strings.TrimSuffix(full, `\`) + " " + strings.TrimSpace(p.lines[p.i])
		p.i++
	}
	d.Text = full
	cmd, args, err := parseLine(full)
	if err != nil {
		col := 1
		var pe *lineError
		if errors.As(err, &pe) {
			col = pe.col
		}
		return nil, p.errAt(start, indent+col, "%s", err.Error())
	}
	d.Cmd, d.Args = cmd, args
	var input []string
	d.inputLine = p.i + 1
	sep := false
	for p.i < len(p.lines) {
		line := p.lines[p.i]
		p.i++
		if line == "----" {
			sep = true
			break
		}
		d.raw = append(d.raw, line)
		if len(input) == 0 && strings.TrimSpace(line) == "" {
			d.inputLine++
			continue
		}
		input = append(input, line)
	}
	if !sep {
		return nil, p.errAt(start, indent+1, "directive %q has no ---- line before its expected output", cmd)
	}
	d.Input = strings.TrimSpace(strings.Join(input, "\n"))
	exp, err := p.expected(start)
	if err != nil {
		return nil, err
	}
	d.Expected = exp
	return d, nil
}

// expected reads the output after ----: up to a blank line, or, when it
// opens with a second ----, up to a ----/---- pair.
func (p *parser) expected(start int) (string, error) {
	var b strings.Builder
	if p.i < len(p.lines) && p.lines[p.i] == "----" {
		open := p.i + 1
		p.i++
		for ; p.i < len(p.lines); p.i++ {
			if p.lines[p.i] == "----" && p.i+1 < len(p.lines) && p.lines[p.i+1] == "----" {
				p.i += 2
				if p.i < len(p.lines) {
					if strings.TrimSpace(p.lines[p.i]) != "" {
						return "", p.errAt(p.i+1, 1, "want a blank line after the closing ----/---- of the block opened at line %d", open)
					}
					p.i++
				}
				return b.String(), nil
			}
			b.WriteString(p.lines[p.i])
			b.WriteByte('\n')
		}
		return "", p.errAt(open, 1, "expected output of the directive at line %d opens with ----/---- but never closes", start)
	}
	for ; p.i < len(p.lines); p.i++ {
		if strings.TrimSpace(p.lines[p.i]) == "" {
			p.i++
			break
		}
		b.WriteString(p.lines[p.i])
		b.WriteByte('\n')
	}
	return b.String(), nil
}

// lineError is datadriven.ParseLine's error with its column.
type lineError struct {
	col int
	msg string
}

func (e *lineError) Error() string { return e.msg }

// parseLine is datadriven.ParseLine behind a recover, so no input can
// panic the replayer, with the column of the failure extracted.
func parseLine(line string) (cmd string, args []Arg, err error) {
	defer func() {
		if r := recover(); r != nil {
			cmd, args, err = "", nil, &lineError{col: 1, msg: fmt.Sprintf("cannot parse directive: %v", r)}
		}
	}()
	cmd, args, err = datadriven.ParseLine(line)
	if err != nil {
		col := 1
		if _, e := fmt.Sscanf(err.Error(), "cannot parse directive at column %d", &col); e != nil {
			col = 1
		}
		return "", nil, &lineError{col: col, msg: "cannot parse directive (unbalanced parentheses or an empty argument name?)"}
	}
	return cmd, args, nil
}

// column returns the 1-based column of argument key in d's first line, or
// 1 when it is not found there.
func (d *Directive) column(key string) int {
	if len(d.raw) == 0 {
		return 1
	}
	line := d.raw[0]
	for i := 0; i+len(key) <= len(line); i++ {
		if line[i:i+len(key)] == key && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t') {
			return i + 1
		}
	}
	return 1
}

// Render writes the file back with each directive's expected output
// replaced by outputs[i] (in the datadriven rewrite layout).
func (f *File) Render(outputs []string) string {
	var b strings.Builder
	for i, d := range f.Directives {
		for _, l := range d.pre {
			b.WriteString(l + "\n")
		}
		for _, l := range d.raw {
			b.WriteString(l + "\n")
		}
		out := d.Expected
		if i < len(outputs) {
			out = outputs[i]
		}
		b.WriteString("----\n")
		if hasBlankLine(out) {
			b.WriteString("----\n" + out + "----\n----\n\n")
		} else {
			b.WriteString(out + "\n")
		}
	}
	for _, l := range f.trailer {
		b.WriteString(l + "\n")
	}
	s := b.String()
	if n := len(s); n > 2 && s[n-1] == '\n' && s[n-2] == '\n' {
		s = s[:n-1]
	}
	return s
}

func hasBlankLine(s string) bool {
	for _, l := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		if strings.TrimSpace(l) == "" && s != "" {
			return true
		}
	}
	return false
}
