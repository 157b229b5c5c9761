package main

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// screen is a minimal terminal emulator for tests: a width x height
// screen over a scrollback, with autowrap, CR, LF (as CR LF, the pty's
// ONLCR), backspace and the CSI sequences the REPL and its line editor
// write (cursor moves, erase). What scrolled off the top stays in the
// scrollback and cannot be reached by cursor moves, as on a terminal.
type screen struct {
	w, h     int
	lines    [][]rune // scrollback and screen; the screen is the last h
	row, col int      // cursor, row indexing lines
}

// newScreen starts with the cursor on the bottom line of a full screen,
// the worst case for in-place redraws.
func newScreen(w, h int) *screen {
	s := &screen{w: w, h: h, lines: make([][]rune, h)}
	s.row = h - 1
	return s
}

func (s *screen) top() int { return max(len(s.lines)-s.h, 0) }

func (s *screen) down() {
	s.row++
	if s.row == len(s.lines) {
		s.lines = append(s.lines, nil)
	}
}

func (s *screen) put(r rune) {
	if s.col >= s.w {
		s.col = 0
		s.down()
	}
	l := s.lines[s.row]
	for len(l) <= s.col {
		l = append(l, ' ')
	}
	l[s.col] = r
	s.lines[s.row] = l
	s.col++
}

// write feeds output to the screen.
func (s *screen) write(out string) {
	for i := 0; i < len(out); {
		r, n := utf8.DecodeRuneInString(out[i:])
		i += n
		switch r {
		case '\r':
			s.col = 0
		case '\n':
			s.col = 0
			s.down()
		case '\b':
			s.col = max(s.col-1, 0)
		case 0x1b:
			i = s.escape(out, i)
		case '\a':
		default:
			if r >= ' ' {
				s.put(r)
			}
		}
	}
}

// escape interprets the sequence after ESC at out[i:] and returns the
// index after it.
func (s *screen) escape(out string, i int) int {
	if i >= len(out) || out[i] != '[' {
		return min(i+1, len(out))
	}
	j := i + 1
	for j < len(out) && (out[j] < 0x40 || out[j] > 0x7e) {
		j++
	}
	if j >= len(out) {
		return j
	}
	args := strings.TrimLeft(out[i+1:j], "?")
	n, err := strconv.Atoi(strings.Split(args, ";")[0])
	if err != nil || n == 0 {
		n = 1
	}
	switch out[j] {
	case 'A':
		s.row = max(s.row-n, s.top())
	case 'B':
		for range n {
			if s.row < len(s.lines)-1 {
				s.row++
			}
		}
	case 'C':
		s.col = min(s.col+n, s.w-1)
	case 'D':
		s.col = max(s.col-n, 0)
	case 'G':
		s.col = min(n-1, s.w-1)
	case 'K':
		if l := s.lines[s.row]; len(l) > s.col {
			s.lines[s.row] = l[:s.col]
		}
	case 'J':
		if l := s.lines[s.row]; len(l) > s.col {
			s.lines[s.row] = l[:s.col]
		}
		for k := s.row + 1; k < len(s.lines); k++ {
			s.lines[k] = nil
		}
	}
	return j + 1
}

// text is the scrollback and screen, trailing blank lines dropped.
func (s *screen) text() string {
	out := make([]string, len(s.lines))
	for i, l := range s.lines {
		out[i] = strings.TrimRight(string(l), " ")
	}
	return strings.TrimRight(strings.Join(out, "\n"), "\n")
}
