package connector

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"clink/sql/expr"
	"clink/sql/ops"
	"clink/sql/types"
)

// produceValues writes each value (nil: a null value) to partition 0.
func produceValues(t *testing.T, addr, topic string, values ...[]byte) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for _, v := range values {
		if err := cl.ProduceSync(context.Background(), &kgo.Record{Topic: topic, Value: v}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

func formatTable(addr, topic string, cols []expr.Column, opts ...string) *Table {
	t := kafkaTable(addr, append([]string{"topic", topic}, opts...)...)
	t.Columns = cols
	return t
}

// TestKafkaValueFormats: format csv (any delimiter, quoted fields, empty
// as NULL, a final line break) and raw (the whole value; a null value is
// a tombstone, skipped as in format json) read what was produced, and bad messages fail naming topic,
// partition and offset, or are counted under on_error = 'skip'.
func TestKafkaValueFormats(t *testing.T) {
	addr := testKafka(t, 1, "csv", "semi", "raw", "badcsv", "badraw")
	kv := []expr.Column{{Name: "k", Type: types.BigInt}, {Name: "s", Type: types.Varchar}}
	line := []expr.Column{{Name: "line", Type: types.Varchar}}
	produceValues(t, addr, "csv", []byte("1,a\n"), []byte(`2,"b, ""quoted"""`), []byte("3,"))
	produceValues(t, addr, "semi", []byte("1;a,b"), []byte("2;\r\n"))
	produceValues(t, addr, "raw", []byte(`{"not": "parsed"}`), nil, []byte("x,y"))
	produceValues(t, addr, "badcsv", []byte("1,a"), []byte("x,b"), []byte("1,2,3"), []byte("4,d"))
	produceValues(t, addr, "badraw", []byte("ok"), []byte{0xff, 0xfe})
	for _, tc := range []struct {
		name    string
		tab     *Table
		want    []string
		err     string
		rejects int64
	}{
		{"csv", formatTable(addr, "csv", kv, "format", "csv"), []string{"1\ta", "2\tb, \"quoted\"", "3\tNULL"}, "", 0},
		{"csv delimiter", formatTable(addr, "semi", kv, "format", "csv", "csv.field-delimiter", ";"), []string{"1\ta,b", "2\tNULL"}, "", 0},
		{"raw", formatTable(addr, "raw", line, "format", "raw"), []string{`{"not": "parsed"}`, "x,y"}, "", 0},
		{"csv bad", formatTable(addr, "badcsv", kv, "format", "csv"), nil, `topic "badcsv" partition 0 offset 1: column k:`, 0},
		{"csv bad skipped", formatTable(addr, "badcsv", kv, "format", "csv", "on_error", "skip"), []string{"1\ta", "4\td"}, "", 2},
		{"raw bad", formatTable(addr, "badraw", line, "format", "raw"), nil, `topic "badraw" partition 0 offset 1: value is not UTF-8 text`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var rejects atomic.Int64
			src, err := openKafka(tc.tab, Env{Rejects: &rejects})
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			got, err := drainErr(src)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") || rejects.Load() != tc.rejects {
				t.Fatalf("got %q (%d rejects), want %q (%d)", got, rejects.Load(), tc.want, tc.rejects)
			}
		})
	}
}

// TestKafkaValueFormatsRoundTrip: what the sink's encoder writes in csv
// and raw, the source's decoder reads back as the same row.
func TestKafkaValueFormatsRoundTrip(t *testing.T) {
	kv := []expr.Column{{Name: "k", Type: types.BigInt}, {Name: "s", Type: types.Varchar}}
	rows := []types.Row{
		{types.NewBigInt(1), types.NewVarchar("plain")},
		{types.NewBigInt(-2), types.NewVarchar(`has "quotes", a comma; and a semicolon`)},
		{types.NullValue, types.NewVarchar(" leading space")},
		{types.NewBigInt(3), types.NullValue},
		{types.NewBigInt(4), types.NewVarchar("semi;colon")},
		{types.NewBigInt(5), types.NewVarchar("com,ma")},
	}
	for _, tc := range []struct {
		name string
		cols []expr.Column
		opts []string
	}{
		{"csv", kv, []string{"format", "csv"}},
		{"csv semicolon", kv, []string{"format", "csv", "csv.field-delimiter", ";"}},
		{"raw", []expr.Column{{Name: "line", Type: types.Varchar}}, []string{"format", "raw"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tab := formatTable("127.0.0.1:1", "t", tc.cols, tc.opts...)
			o, err := ParseKafka(tab)
			if err != nil {
				t.Fatal(err)
			}
			enc := newKafkaEncoder(tab, o)
			dec, err := newKafkaDecoder(tab, o, Env{})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rows {
				r = r[2-len(tc.cols):]
				if len(r) == 1 && r[0].IsNull() {
					continue // raw writes a NULL as a tombstone, which a kafka source skips
				}
				m := enc.encode(ops.Change{Kind: ops.Insert, Row: r})
				back, err := dec.row(&kgo.Record{Value: m.value})
				if err != nil {
					t.Fatalf("%v -> %q: %v", r, m.value, err)
				}
				if back.String() != r.String() {
					t.Errorf("%v -> %q -> %v", r, m.value, back)
				}
			}
		})
	}
}

// TestKafkaFormatOptionErrors: the format options are checked at CREATE
// TABLE, naming the option.
func TestKafkaFormatOptionErrors(t *testing.T) {
	kv := []expr.Column{{Name: "k", Type: types.BigInt}, {Name: "s", Type: types.Varchar}}
	for _, tc := range []struct {
		cols []expr.Column
		opts []string
		want string
	}{
		{kv, []string{"format", "avro"}, "want json, debezium-json, csv or raw"},
		{kv, []string{"format", "raw"}, "format raw needs exactly one physical column, a VARCHAR"},
		{[]expr.Column{{Name: "n", Type: types.BigInt}}, []string{"format", "raw"}, "format raw needs exactly one physical column, a VARCHAR"},
		{kv, []string{"format", "json", "csv.field-delimiter", ";"}, "csv.field-delimiter: applies to format csv"},
		{kv, []string{"format", "csv", "csv.field-delimiter", ";;"}, "csv.field-delimiter: want one character"},
		{kv, []string{"format", "csv", "csv.field-delimiter", `"`}, "cannot be a quote or a line break"},
	} {
		_, err := ParseKafka(formatTable("127.0.0.1:1", "t", tc.cols, tc.opts...))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want %q", tc.opts, err, tc.want)
		}
	}
}
