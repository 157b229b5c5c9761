package expr

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	lru "github.com/hashicorp/golang-lru/v2"

	"clink/sql/types"
)

func vc(s string) (types.Value, error) { return types.NewVarchar(s), nil }

func init() {
	register([]string{"UPPER", "UCASE"}, &builtin{1, 1, sig(types.Varchar, str),
		func(a []types.Value) (types.Value, error) { return vc(strings.ToUpper(a[0].Str())) }, false})
	register([]string{"LOWER", "LCASE"}, &builtin{1, 1, sig(types.Varchar, str),
		func(a []types.Value) (types.Value, error) { return vc(strings.ToLower(a[0].Str())) }, false})
	register([]string{"LENGTH", "CHAR_LENGTH", "CHARACTER_LENGTH"}, &builtin{1, 1, sig(types.BigInt, str),
		func(a []types.Value) (types.Value, error) {
			return types.NewBigInt(int64(utf8.RuneCountInString(a[0].Str()))), nil
		}, false})
	register([]string{"SUBSTRING"}, &builtin{2, 3, sig(types.Varchar, str, intg), substring, false})
	register([]string{"BTRIM"}, &builtin{1, 2, sig(types.Varchar, str), trimFunc(strings.Trim), false})
	register([]string{"LTRIM"}, &builtin{1, 2, sig(types.Varchar, str), trimFunc(strings.TrimLeft), false})
	register([]string{"RTRIM"}, &builtin{1, 2, sig(types.Varchar, str), trimFunc(strings.TrimRight), false})
	register([]string{"CONCAT"}, &builtin{1, -1, sig(types.Varchar, anyT), concat, true})
	register([]string{"CONCAT_WS"}, &builtin{2, -1, sig(types.Varchar, str, anyT), concatWS, true})
	register([]string{"REPLACE"}, &builtin{3, 3, sig(types.Varchar, str),
		func(a []types.Value) (types.Value, error) {
			return vc(strings.ReplaceAll(a[0].Str(), a[1].Str(), a[2].Str()))
		}, false})
	register([]string{"SPLIT_PART"}, &builtin{3, 3, sig(types.Varchar, str, str, intg), splitPart(1), false})
	register([]string{"SPLIT_INDEX"}, &builtin{3, 3, sig(types.Varchar, str, str, intg), splitPart(0), false})
	register([]string{"POSITION", "STRPOS"}, &builtin{2, 2, sig(types.BigInt, str), position, false})
	register([]string{"REVERSE"}, &builtin{1, 1, sig(types.Varchar, str), reverse, false})
	register([]string{"LEFT"}, &builtin{2, 2, sig(types.Varchar, str, intg), leftRight(true), false})
	register([]string{"RIGHT"}, &builtin{2, 2, sig(types.Varchar, str, intg), leftRight(false), false})
	register([]string{"REGEXP_EXTRACT"}, &builtin{2, 3, sig(types.Varchar, str, str, intg), regexpExtract, false})
	register([]string{"REGEXP_REPLACE"}, &builtin{3, 3, sig(types.Varchar, str), regexpReplace, false})
}

// substring is SQL SUBSTRING(s, start [, len]) with 1-based positions;
// a start before 1 shortens the length as in PostgreSQL.
func substring(a []types.Value) (types.Value, error) {
	r := []rune(a[0].Str())
	start := a[1].Int()
	end := int64(len(r)) + 1
	if len(a) == 3 {
		if a[2].Int() < 0 {
			return types.NullValue, fmt.Errorf("negative substring length")
		}
		end = min(end, start+a[2].Int())
	}
	start = max(start, 1)
	if start >= end {
		return vc("")
	}
	return vc(string(r[start-1 : end-1]))
}

func trimFunc(f func(string, string) string) func([]types.Value) (types.Value, error) {
	return func(a []types.Value) (types.Value, error) {
		cut := " "
		if len(a) == 2 {
			cut = a[1].Str()
		}
		return vc(f(a[0].Str(), cut))
	}
}

// concat joins arguments as text, skipping NULLs (PostgreSQL's CONCAT).
func concat(a []types.Value) (types.Value, error) {
	var b strings.Builder
	for _, v := range a {
		if !v.IsNull() {
			b.WriteString(v.String())
		}
	}
	return vc(b.String())
}

func concatWS(a []types.Value) (types.Value, error) {
	if a[0].IsNull() {
		return types.NullValue, nil
	}
	var parts []string
	for _, v := range a[1:] {
		if !v.IsNull() {
			parts = append(parts, v.String())
		}
	}
	return vc(strings.Join(parts, a[0].Str()))
}

// splitPart returns the n-th field (base 1 for SPLIT_PART, which yields ”
// when out of range; base 0 for Flink's SPLIT_INDEX, which yields NULL).
func splitPart(base int64) func([]types.Value) (types.Value, error) {
	return func(a []types.Value) (types.Value, error) {
		n := a[2].Int() - base
		if base == 1 && n < 0 {
			return types.NullValue, fmt.Errorf("field position must not be zero")
		}
		var parts []string
		if a[1].Str() == "" {
			parts = []string{a[0].Str()}
		} else {
			parts = strings.Split(a[0].Str(), a[1].Str())
		}
		if n < 0 || n >= int64(len(parts)) {
			if base == 0 {
				return types.NullValue, nil
			}
			return vc("")
		}
		return vc(parts[n])
	}
}

func position(a []types.Value) (types.Value, error) {
	i := strings.Index(a[1].Str(), a[0].Str())
	if i < 0 {
		return types.NewBigInt(0), nil
	}
	return types.NewBigInt(int64(utf8.RuneCountInString(a[1].Str()[:i])) + 1), nil
}

func reverse(a []types.Value) (types.Value, error) {
	r := []rune(a[0].Str())
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return vc(string(r))
}

func leftRight(left bool) func([]types.Value) (types.Value, error) {
	return func(a []types.Value) (types.Value, error) {
		r := []rune(a[0].Str())
		n := a[1].Int()
		if n < 0 {
			n = max(int64(len(r))+n, 0)
		}
		n = min(n, int64(len(r)))
		if left {
			return vc(string(r[:n]))
		}
		return vc(string(r[int64(len(r))-n:]))
	}
}

// regexCacheSize bounds the compiled patterns kept: a pattern taken from a
// column can be different on every row, and an unbounded cache would grow
// with the data.
const regexCacheSize = 256

// regexCache keeps the most recently used compiled patterns (least
// recently used out first). It is safe for concurrent use by subtasks.
// (lru.New fails only for a size below 1.)
var regexCache, _ = lru.New[string, *regexp.Regexp](regexCacheSize)

func compileRegexp(p string) (*regexp.Regexp, error) {
	if re, ok := regexCache.Get(p); ok {
		return re, nil
	}
	re, err := regexp.Compile(p)
	if err != nil {
		return nil, err
	}
	regexCache.Add(p, re)
	return re, nil
}

// regexpExtract returns capture group idx (default 1; 0 is the whole
// match) of the first match, or NULL when there is no match.
func regexpExtract(a []types.Value) (types.Value, error) {
	re, err := compileRegexp(a[1].Str())
	if err != nil {
		return types.NullValue, err
	}
	idx := int64(1)
	if len(a) == 3 {
		idx = a[2].Int()
	}
	m := re.FindStringSubmatchIndex(a[0].Str())
	if m == nil || idx < 0 || int(idx) > re.NumSubexp() || m[2*idx] < 0 {
		return types.NullValue, nil
	}
	return vc(a[0].Str()[m[2*idx]:m[2*idx+1]])
}

func regexpReplace(a []types.Value) (types.Value, error) {
	re, err := compileRegexp(a[1].Str())
	if err != nil {
		return types.NullValue, err
	}
	return vc(re.ReplaceAllString(a[0].Str(), a[2].Str()))
}
