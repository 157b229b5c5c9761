package server

import (
	"context"
	"reflect"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestPgxArrays: arrays reach pgx with PostgreSQL's array OIDs, in the
// text (simple protocol) and binary (extended protocol) formats, NULL
// elements and empty arrays included.
func TestPgxArrays(t *testing.T) {
	ts := startServer(t, Config{})
	conn := connect(t, ts.addr, "")
	const q = `SELECT ARRAY[1, NULL, 3] AS a, ARRAY['x y', 'z', ''] AS s, ARRAY[CAST(7 AS INT)] AS i,
		CAST(ARRAY[] AS BIGINT[]) AS e, ARRAY[1.5e0, -2e0] AS d`
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeCacheStatement} {
		t.Run(mode.String(), func(t *testing.T) {
			var (
				a []*int64
				s []string
				i []int32
				e []int64
				d []float64
			)
			rows, err := conn.Query(context.Background(), q, mode)
			if err != nil {
				t.Fatal(err)
			}
			oids := []uint32{}
			for _, f := range rows.FieldDescriptions() {
				oids = append(oids, f.DataTypeOID)
			}
			rows.Close()
			if want := []uint32{1016, 1015, 1007, 1016, 1022}; !reflect.DeepEqual(oids, want) {
				t.Errorf("OIDs = %v, want %v", oids, want)
			}
			if err := conn.QueryRow(context.Background(), q, mode).Scan(&a, &s, &i, &e, &d); err != nil {
				t.Fatal(err)
			}
			if len(a) != 3 || a[0] == nil || *a[0] != 1 || a[1] != nil || a[2] == nil || *a[2] != 3 {
				t.Errorf("a = %v", a)
			}
			if !reflect.DeepEqual(s, []string{"x y", "z", ""}) || !reflect.DeepEqual(i, []int32{7}) ||
				len(e) != 0 || !reflect.DeepEqual(d, []float64{1.5, -2}) {
				t.Errorf("s = %q, i = %v, e = %v, d = %v", s, i, e, d)
			}
		})
	}
}
