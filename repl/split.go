package repl

import (
	"strings"

	"clink/sql/types"
)

// Chunk is a piece of a script: SQL statements, or one backslash command
// line; Offset is its byte offset in the script.
type Chunk struct {
	Text    string
	Offset  int
	Command bool
}

// SplitCommands splits a script into SQL chunks and backslash command
// lines. A line starting with a backslash is a command only between
// statements, never inside one (or inside a string or comment).
func SplitCommands(src string) []Chunk {
	var out []Chunk
	sqlStart, off := 0, 0
	flush := func(end int) {
		if text := src[sqlStart:end]; !Blank(text) {
			out = append(out, Chunk{Text: text, Offset: sqlStart})
		}
	}
	for off < len(src) {
		end := strings.IndexByte(src[off:], '\n')
		if end < 0 {
			end = len(src)
		} else {
			end += off + 1
		}
		line := src[off:end]
		pending := src[sqlStart:off]
		between := Blank(pending) || Complete(pending)
		if between && strings.HasPrefix(strings.TrimSpace(line), `\`) {
			flush(off)
			lead := len(line) - len(strings.TrimLeft(line, " \t"))
			out = append(out, Chunk{Text: strings.TrimSpace(line), Offset: off + lead, Command: true})
			sqlStart = end
		}
		off = end
	}
	flush(len(src))
	return out
}

// HistoryLine turns a multi-line statement into one history entry:
// comments dropped, runs of white space outside strings made one space.
func HistoryLine(stmt string) string {
	var b strings.Builder
	for _, t := range scan(stmt) {
		switch t.kind {
		case tokComment:
			if !strings.HasSuffix(b.String(), " ") && b.Len() > 0 {
				b.WriteByte(' ')
			}
		case tokSpace:
			if b.Len() > 0 && !strings.HasSuffix(b.String(), " ") {
				b.WriteByte(' ')
			}
		default:
			b.WriteString(stmt[t.start:t.end])
		}
	}
	return strings.TrimSpace(b.String())
}

func isNumericKind(v types.Value) bool {
	switch v.Kind() {
	case types.KindInt, types.KindBigInt, types.KindDouble, types.KindDecimal:
		return true
	}
	return false
}
