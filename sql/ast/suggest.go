package ast

import (
	"strings"

	"github.com/agnivade/levenshtein"
)

// Suggest returns the candidate closest to name by edit distance
// (case-insensitive), or "" when none is close enough to be a likely
// typo: at most 1 edit for names of up to 4 characters, 2 up to 8, 3
// beyond. Ties go to the earlier candidate, so callers pass a stable
// order. It backs the "did you mean" of unknown tables, columns,
// functions and REPL commands.
func Suggest(name string, candidates []string) string {
	n := strings.ToLower(name)
	limit := 3
	switch l := len([]rune(n)); {
	case l <= 1:
		return ""
	case l <= 4:
		limit = 1
	case l <= 8:
		limit = 2
	}
	best, bestD := "", limit+1
	for _, c := range candidates {
		lc := strings.ToLower(c)
		if lc == n {
			continue // the same name is not a suggestion
		}
		if d := levenshtein.ComputeDistance(n, lc); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// DidYouMean is " (did you mean X?)" for Suggest's answer, or "".
func DidYouMean(name string, candidates []string) string {
	if s := Suggest(name, candidates); s != "" {
		return " (did you mean " + s + "?)"
	}
	return ""
}
