package connector

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"clink/sql/types"
)

// csvLines are lines that stress the fast path's equivalence with
// encoding/csv.
var csvLines = []string{
	"a,b,c", "a,,c", ",", ",,", "a", " a , b ", "a,b\r", "a,b\r\r", "a\rb,c", "\ra,b",
	`"a,b",c`, `a"b,c`, `"a""b",c`, `"unterminated,c`, `a,"b"c,d`, `"",""`, `" spaced ",x`,
	"é,ü,\xff\xfe", "a;b;c", "a\tb\tc", "a|b|c", "tab\t,semi;", "trailing,", ",leading",
	strings.Repeat("long,", 2000) + "end", `x,"multi` + strings.Repeat("y", 5000) + `"`,
}

// oldFields is the encoding/csv reading of one line the csv source used
// before its fast path.
func oldFields(line string, delim rune) ([]string, error) {
	cr := csv.NewReader(strings.NewReader(line))
	cr.Comma, cr.FieldsPerRecord, cr.LazyQuotes = delim, -1, true
	return cr.Read()
}

func checkFields(t *testing.T, r *csvReader, line string) {
	t.Helper()
	want, werr := oldFields(line, r.delim)
	got, gerr := r.splitRecord(line)
	if (werr != nil) != (gerr != nil) || werr != nil && werr.Error() != gerr.Error() {
		t.Fatalf("delim %q line %q: err %v, encoding/csv %v", r.delim, line, gerr, werr)
	}
	if werr == nil && !reflect.DeepEqual(append([]string{}, got...), want) {
		t.Fatalf("delim %q line %q:\n got %q\nwant %q", r.delim, line, got, want)
	}
}

func TestCSVFastPathMatchesEncodingCSV(t *testing.T) {
	p := writeFile(t, t.TempDir(), "in.csv", "")
	for _, d := range []string{",", ";", "\t", "|", "\"", "\x00", "\xff"} {
		r := openTiny(t, rowsTable(p, "delimiter", d), Env{}).(*csvReader)
		for _, line := range csvLines {
			checkFields(t, r, line)
		}
		// and again in reverse: the reused reader carries nothing over
		for i := len(csvLines) - 1; i >= 0; i-- {
			checkFields(t, r, csvLines[i])
		}
	}
}

// FuzzCSVFields: the fast path and the reused encoding/csv reader split
// every line as a fresh encoding/csv reader does.
func FuzzCSVFields(f *testing.F) {
	for _, l := range csvLines {
		f.Add(l, l, byte(','))
	}
	f.Add("a;b", `"x;y";z`, byte(';'))
	f.Fuzz(func(t *testing.T, a, b string, delim byte) {
		p := writeFile(t, t.TempDir(), "in.csv", "")
		r := openTiny(t, rowsTable(p, "delimiter", string([]byte{delim})), Env{}).(*csvReader)
		for _, line := range []string{a, b, a} {
			if strings.ContainsAny(line, "\n") || strings.TrimSpace(line) == "" {
				continue // the source never splits such lines
			}
			checkFields(t, r, line)
		}
	})
}

// jsonLines stress the flat scanner's equivalence with encoding/json.
var jsonLines = []string{
	`{"b":true,"i":1,"n":2,"d":1.5,"m":3.25,"s":"abc","ts":"2024-01-02 03:04:05.678"}`,
	` { "i" : -0 , "s" : "" , "d" : 1e3 } `, `{"I":7,"S":"upper"}`, `{"i":1,"i":2}`, `{"i":1,"I":3}`,
	`{"s":null,"i":null}`, `{}`, `{"s":"a"} trailing garbage`, `{"s":"a"}{"s":"b"}`,
	`{"s":"esc\"aped"}`, `{"s":"\u00e9"}`, `{"s":"é"}`, "{\"s\":\"\xff\"}", `{"s":{"a":[1,2]}}`,
	`{"s":[1,"<b>"]}`, `{"s":true,"i":false}`, `{"i":01}`, `{"i":1.}`, `{"i":-}`, `{"i":1e}`, `{"i":.5}`,
	`{"i":"7"}`, `{"i":""}`, `{"d":"NaN"}`, `{"n":1e400}`, `{"i":2147483648}`, `{"s":tru}`, `{"s":nul}`,
	`{"s":"a",}`, `{"s":"a" "i":1}`, `{"s" "a"}`, `{"s":"a"`, `{"s`, `{`, `null`, `[]`, `"str"`, `7`,
	"{\"s\":\"tab\there\"}", `{"ts":12}`, `{"m":"x"}`, `{"s":"a","s":null}`, "\t{\"s\":\"ws\"}\r",
	`{"u":2443.691829}`, `{"u":"1.50"}`, `{"u":0.1234567890123456789}`, `{"u":1e400}`, `{"m":12.345}`,
	`{"u":1.5} x`, `{} }`, `{"s":"a"}  `,
}

func TestJSONLFlatMatchesEncodingJSON(t *testing.T) {
	tbl := fuzzTable("jsonl", "", nil)
	for _, line := range jsonLines {
		checkJSONL(t, tbl, line)
	}
}

func checkJSONL(t *testing.T, tbl *Table, line string) {
	t.Helper()
	r := &jsonlReader{&lineReader{t: tbl}}
	got, gerr := r.parse(line)
	want, werr := r.parseJSON(line)
	if fmt.Sprint(gerr) != fmt.Sprint(werr) || !reflect.DeepEqual(got, want) {
		t.Fatalf("line %q:\n got %v (%v)\nwant %v (%v)", line, got, gerr, want, werr)
	}
}

// FuzzJSONLFlat: the flat scanner decodes every line as encoding/json does.
func FuzzJSONLFlat(f *testing.F) {
	for _, l := range jsonLines {
		f.Add(l)
	}
	tbl := fuzzTable("jsonl", "", nil)
	f.Fuzz(func(t *testing.T, line string) {
		if ambiguousFold(tbl, line) {
			return // encoding/json's map order picks either of two keys
		}
		checkJSONL(t, tbl, line)
	})
}

// ambiguousFold reports a line where a column has no member of exactly
// its name but two distinct members matching it ignoring case.
func ambiguousFold(tbl *Table, line string) bool {
	var obj map[string]any
	if json.NewDecoder(strings.NewReader(line)).Decode(&obj) != nil {
		return false
	}
	for _, c := range tbl.Columns {
		if _, ok := obj[c.Name]; ok {
			continue
		}
		n := 0
		for k := range obj {
			if strings.EqualFold(k, c.Name) {
				n++
			}
		}
		if n > 1 {
			return true
		}
	}
	return false
}

// timestamps stress the fast TIMESTAMP parser against types.ParseAs.
var timestamps = []string{
	"2024-01-02 03:04:05", "2024-01-02 03:04:05.6", "2024-01-02 03:04:05.678", "2024-01-02 03:04:05.678999999",
	"2024-01-02T03:04:05.1", "1969-12-31 23:59:59.999", "0000-01-01 00:00:00", "2024-02-29 00:00:00",
	"2023-02-29 00:00:00", "1900-02-29 00:00:00", "2000-02-29 12:00:00", "2024-04-31 00:00:00",
	"2024-13-01 00:00:00", "2024-00-01 00:00:00", "2024-01-00 00:00:00", "2024-01-02 24:00:00",
	"2024-01-02 23:60:00", "2024-01-02 23:59:60", "2024-01-02 3:04:05", "2024-01-02 03:04:05.",
	"2024-01-02 03:04:05,5", "2024-01-02 03:04:05.1234567890", "2024-01-02 03:04:05Z", "2024-01-02 03:04:05.5x",
	"2024-01-02", "2024-01-02 03:04", "+024-01-02 03:04:05", "2024-01-02 03:04:0a", "２０２４-01-02 03:04:05",
}

func checkTimestamp(t *testing.T, s string) bool {
	t.Helper()
	ms, ok := fastTimestamp(s)
	if !ok {
		return false
	}
	want, err := types.ParseAs(s, types.Timestamp)
	if err != nil || want.Int() != ms {
		t.Fatalf("%q: fast %d, types.ParseAs %v (%v)", s, ms, want, err)
	}
	return true
}

func TestFastTimestamp(t *testing.T) {
	fast := 0
	for _, s := range timestamps {
		if checkTimestamp(t, s) {
			fast++
		}
	}
	if fast < 9 {
		t.Fatalf("only %d of the timestamps took the fast path", fast)
	}
}

// FuzzFastTimestamp: what the fast parser accepts, types.ParseAs reads
// to the same instant.
func FuzzFastTimestamp(f *testing.F) {
	for _, s := range timestamps {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkTimestamp(t, s) })
}
