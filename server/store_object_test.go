package server

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"clink/state/objpool"
	"clink/state/s3pool"
	"clink/state/s3pool/s3fake"
)

// fakeObjectStores points newObjectStore at one in-process S3 bucket for
// the test and returns a store on it to look at.
func fakeObjectStores(t *testing.T) objpool.ObjectStore {
	t.Helper()
	fake, err := s3fake.New(time.Unix(0, 0), "cat")
	if err != nil {
		t.Fatal(err)
	}
	open := func(string) (objpool.ObjectStore, error) {
		return s3pool.NewStore(s3pool.Config{Bucket: "cat", Prefix: "srv", Endpoint: s3fake.Endpoint, Region: "us-east-1",
			AccessKeyID: "test", SecretAccessKey: "test-secret", HTTPClient: fake})
	}
	saved := newObjectStore
	newObjectStore = open
	t.Cleanup(func() { newObjectStore = saved })
	st, err := open("")
	if err != nil {
		t.Fatal(err)
	}
	return st
}

const catURI = "remote-read://cat/srv"

// TestObjectCatalogTakeover: the remote-read:// catalog survives a reopen,
// a server opened later takes it over (the older one's next statement
// fails, naming why, and its catalog is not undone), a damaged object is
// refused, and freeObjects deletes one job's objects only.
func TestObjectCatalogTakeover(t *testing.T) {
	st := fakeObjectStores(t)
	a, err := openStore(catURI)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []entry{{Kind: entryDDL, SQL: "CREATE TABLE t (k BIGINT)"}, {Kind: entryMV, SQL: "CREATE MATERIALIZED VIEW v AS SELECT k FROM t", Job: 1}} {
		if err := a.add(e); err != nil {
			t.Fatal(err)
		}
	}
	b, err := openStore(catURI)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.list(); len(got) != 2 || got[1].SQL != "CREATE MATERIALIZED VIEW v AS SELECT k FROM t" {
		t.Fatalf("reopened catalog = %+v", got)
	}
	err = a.add(entry{Kind: entryDDL, SQL: "DROP TABLE t"})
	if err == nil || !strings.Contains(err.Error(), "another clink serve took over the catalog of remote-read://cat/srv") {
		t.Fatalf("older server's write = %v, want a takeover error", err)
	}
	if got := a.list(); len(got) != 2 {
		t.Fatalf("a failed write changed the older server's catalog: %+v", got)
	}
	if err := b.remove(1); err != nil {
		t.Fatal(err)
	}
	c, err := openStore(catURI)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.list(); len(got) != 1 || got[0].SQL != "CREATE TABLE t (k BIGINT)" {
		t.Fatalf("catalog after the newer server's remove = %+v", got)
	}

	ctx := context.Background()
	if _, err := st.PutIfMatch(ctx, storeFile, []byte("{not json"), mustEtag(t, st)); err != nil {
		t.Fatal(err)
	}
	if _, err := openStore(catURI); err == nil || !strings.Contains(err.Error(), "serve: catalog remote-read://cat/srv/serve-catalog.json is damaged") {
		t.Fatalf("damaged catalog: %v", err)
	}

	for _, k := range []string{"mv-a-1/r1/CURRENT", "mv-a-1/r1/x", "mv-ab-2/r1/CURRENT"} {
		if _, err := st.PutIfAbsent(ctx, k, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if err := freeState(catURI, "mv-a-1"); err != nil {
		t.Fatal(err)
	}
	keys, err := st.List(ctx, "mv-")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(keys, []string{"mv-ab-2/r1/CURRENT"}) {
		t.Fatalf("objects after freeing mv-a-1: %v", keys)
	}
}

func mustEtag(t *testing.T, st objpool.ObjectStore) string {
	t.Helper()
	_, etag, err := st.Get(context.Background(), storeFile)
	if err != nil {
		t.Fatal(err)
	}
	return etag
}

// TestServeRemoteReadAcrossRestart: a server on remote-read:// (the S3
// server on 127.0.0.1 that .ci/run starts) keeps its catalog and its views'
// checkpoints in the bucket: after a restart a view over a file is back
// with the same contents, a view over an unbounded generator is running
// again, and DROP frees its objects.
func TestServeRemoteReadAcrossRestart(t *testing.T) {
	ep := os.Getenv("CLINK_S3_ENDPOINT")
	if ep == "" {
		t.Skip("CLINK_S3_ENDPOINT is not set: start the S3 server (scripts/s3.sh start; eval \"$(scripts/s3.sh env)\")")
	}
	if !strings.HasPrefix(ep, "http://127.0.0.1:") {
		t.Fatalf("CLINK_S3_ENDPOINT=%q: tests only talk to 127.0.0.1", ep)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", os.Getenv("CLINK_S3_ACCESS_KEY"))
	t.Setenv("AWS_SECRET_ACCESS_KEY", os.Getenv("CLINK_S3_SECRET_KEY"))
	bucket := os.Getenv("CLINK_S3_BUCKET")
	prefix := fmt.Sprintf("serve-%d", time.Now().UnixNano())
	uri := fmt.Sprintf("remote-read://%s/%s?endpoint=%s", bucket, prefix, ep)
	dir := t.TempDir()
	path := writeCSV(t, dir, 200, 4)
	cfg := Config{StateURI: uri}
	ts := startServer(t, cfg)
	conn := connect(t, ts.addr, "")
	ctx := context.Background()
	for _, sql := range []string{
		fmt.Sprintf(`CREATE TABLE bids (k BIGINT, v BIGINT) WITH (connector='csv', path='%s', format='csv', header='true')`, path),
		`CREATE MATERIALIZED VIEW totals AS SELECT k, COUNT(*) AS n, SUM(v) AS s FROM bids GROUP BY k`,
		`CREATE TABLE g (id BIGINT) WITH (connector='datagen')`,
		`CREATE MATERIALIZED VIEW mods AS SELECT id % 3 AS b, COUNT(*) AS n FROM g GROUP BY id % 3`,
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	waitJobState(t, conn, 1, "finished")
	want := fmt.Sprint(wantTotals(200, 4))
	if got := fmt.Sprint(totalsRows(t, conn)); got != want {
		t.Fatalf("view = %s, want %s", got, want)
	}
	st, err := newObjectStore(uri)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); len(listed(t, st, "mv-mods")) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			all, _ := st.List(ctx, "")
			t.Fatalf("the generator view's checkpoints never reached the bucket: %v", all)
		}
	}
	conn.Close(ctx)
	ts.stop(t)

	ts2 := startServer(t, cfg)
	conn2 := connect(t, ts2.addr, "")
	waitJobState(t, conn2, 1, "finished")
	if got := fmt.Sprint(totalsRows(t, conn2)); got != want {
		t.Fatalf("view after restart = %s, want %s", got, want)
	}
	waitJobState(t, conn2, 2, "running")
	if _, err := conn2.Exec(ctx, "DROP MATERIALIZED VIEW mods"); err != nil {
		t.Fatal(err)
	}
	if left := listed(t, st, "mv-mods"); len(left) != 0 {
		t.Fatalf("objects of the dropped view remain: %v", left)
	}
}

func listed(t *testing.T, st objpool.ObjectStore, prefix string) []string {
	t.Helper()
	keys, err := st.List(context.Background(), prefix)
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// totalsRows reads the totals view in key order.
func totalsRows(t *testing.T, conn *pgx.Conn) [][3]int64 {
	t.Helper()
	rows, err := conn.Query(context.Background(), "SELECT k, n, s FROM totals ORDER BY k")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out [][3]int64
	for rows.Next() {
		var r [3]int64
		if err := rows.Scan(&r[0], &r[1], &r[2]); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
