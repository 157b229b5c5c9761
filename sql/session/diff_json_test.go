package session_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// jsonQueries pair clink's JSON functions with SQLite's (whose -> and ->>
// follow PostgreSQL's): member and element access, nested, and the SQL/JSON
// path functions, whose scalar / object rules SQLite spells with json_type.
var jsonQueries = [][2]string{
	{`SELECT id, doc->'a', doc->>'a', doc->'s', doc->>'s', doc->'n', doc->>'n' FROM j`, ``},
	{`SELECT id, doc->'arr'->1, doc->'arr'->>0, doc->'arr'->>-1, doc->'o'->'arr'->>2, doc->'o'->>'x' FROM j`, ``},
	{`SELECT id, doc->'missing', doc->'arr'->'a', doc->'a'->0 FROM j`, ``},
	{`SELECT id, JSON_VALUE(doc, '$.o.x'), JSON_VALUE(doc, '$.arr[1]'), JSON_VALUE(doc, 'lax $.s') FROM j`,
		`SELECT id, ` + jsonValueOracle("$.o.x") + `, ` + jsonValueOracle("$.arr[1]") + `, ` + jsonValueOracle("$.s") + ` FROM j`},
	{`SELECT id, JSON_QUERY(doc, '$.o'), JSON_QUERY(doc, '$.arr'), JSON_QUERY(doc, '$.s') FROM j`,
		`SELECT id, ` + jsonQueryOracle("$.o") + `, ` + jsonQueryOracle("$.arr") + `, ` + jsonQueryOracle("$.s") + ` FROM j`},
	{`SELECT id FROM j WHERE JSON_EXISTS(doc, '$.o.arr[2]')`, `SELECT id FROM j WHERE json_type(doc, '$.o.arr[2]') IS NOT NULL`},
	{`SELECT doc->>'s' AS s, COUNT(*), SUM(CAST(doc->>'a' AS BIGINT)) FROM j GROUP BY doc->>'s'`, ``},
	// Flink's construction functions against SQLite's json_object /
	// json_array, which keep NULLs (NULL ON NULL) and nest JSON they built.
	{`SELECT id, JSON_OBJECT('id' VALUE id, 's' VALUE doc->>'s', 'arr' VALUE JSON_ARRAY(id, doc->>'s', CAST(doc->>'a' AS BIGINT) NULL ON NULL)) FROM j`,
		`SELECT id, json_object('id', id, 's', doc->>'s', 'arr', json_array(id, doc->>'s', CAST(doc->>'a' AS INTEGER))) FROM j`},
	{`SELECT id, JSON_ARRAY(doc->>'s', id), JSON_OBJECT(KEY 'o' VALUE JSON_OBJECT('s' VALUE doc->>'s' ABSENT ON NULL)) FROM j`,
		`SELECT id, CASE WHEN doc->>'s' IS NULL THEN json_array(id) ELSE json_array(doc->>'s', id) END,
		        json_object('o', CASE WHEN doc->>'s' IS NULL THEN json_object() ELSE json_object('s', doc->>'s') END) FROM j`},
}

func jsonValueOracle(p string) string {
	return fmt.Sprintf(`CASE WHEN json_type(doc, '%[1]s') IN ('object', 'array', 'null') THEN NULL ELSE CAST(json_extract(doc, '%[1]s') AS TEXT) END`, p)
}

func jsonQueryOracle(p string) string {
	return fmt.Sprintf(`CASE WHEN json_type(doc, '%[1]s') IN ('object', 'array') THEN json_extract(doc, '%[1]s') END`, p)
}

// genJSON makes documents with members a (integer), s (a short string or
// absent), n (null), arr (integers and strings), o (an object holding x
// and arr): keys in sorted order, as encoding/json renders them.
func genJSON(seed uint64, n int) genTable {
	rng := rand.New(rand.NewPCG(seed, 7))
	scalar := func() string {
		switch rng.IntN(4) {
		case 0:
			return fmt.Sprint(rng.IntN(100) - 50)
		case 1:
			return fmt.Sprintf(`"%c%d"`, 'a'+rune(rng.IntN(3)), rng.IntN(3))
		case 2:
			return "null"
		}
		return fmt.Sprint(rng.IntN(10))
	}
	arr := func() string {
		parts := make([]string, rng.IntN(4))
		for i := range parts {
			parts[i] = scalar()
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	tb := genTable{name: "j", ddl: "id BIGINT, doc VARCHAR"}
	for i := range n {
		var m []string
		m = append(m, fmt.Sprintf(`"a":%d`, rng.IntN(20)))
		if rng.IntN(3) > 0 {
			m = append(m, `"arr":`+arr())
		}
		m = append(m, `"n":null`)
		if rng.IntN(3) > 0 {
			m = append(m, fmt.Sprintf(`"o":{"arr":%s,"x":%s}`, arr(), scalar()))
		}
		if rng.IntN(4) > 0 {
			m = append(m, fmt.Sprintf(`"s":"s%d"`, rng.IntN(4)))
		}
		tb.rows = append(tb.rows, []any{int64(i), "{" + strings.Join(m, ",") + "}"})
	}
	return tb
}

func TestDifferentialJSON(t *testing.T) {
	data := []genTable{genJSON(1, 300)}
	db := oracle(t, data)
	defer db.Close()
	oq := side(jsonQueries, 1)
	for i, q := range oq {
		if q == "" { // SQLite reads clink's text alike
			oq[i] = jsonQueries[i][0]
		}
	}
	want := oracleWant(t, db, oq, 4)
	for _, v := range variants[:3] {
		t.Run(v.name, func(t *testing.T) {
			checkQueries(t, sessionWith(t, v, valuesDDL(data)), side(jsonQueries, 0), want)
		})
	}
}
