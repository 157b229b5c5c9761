package connector

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kgo"

	"clink/sql/ops"
	"clink/sql/types"
)

// kafkaDecoder turns a record into a row of the table: the value's JSON
// object fills the physical columns (the jsonl parser's rules: fields by
// name, missing or null is NULL), the record fills the METADATA columns.
type kafkaDecoder struct {
	t     *Table
	o     *KafkaOptions
	env   Env
	phys  *Table // the physical columns only, for the JSON parser
	pcols []int  // phys column i is table column pcols[i]
	meta  []int  // table columns read from the record
	csv   csvSplitter
}

func newKafkaDecoder(t *Table, o *KafkaOptions, env Env) (*kafkaDecoder, error) {
	d := &kafkaDecoder{t: t, o: o, env: env, phys: &Table{Name: t.Name}}
	if o.Format == FormatCSV {
		d.csv.init(o.CSVDelim)
	}
	for i, c := range t.Columns {
		if t.metadataKey(i) != "" {
			d.meta = append(d.meta, i)
			continue
		}
		d.phys.Columns = append(d.phys.Columns, c)
		d.pcols = append(d.pcols, i)
	}
	return d, nil
}

// changes decodes a record: one +I for format json; for debezium-json the
// envelope's one or two changes (decodeDebezium), each row with the
// record's METADATA columns.
//
// An upsert-kafka record is an upsert of its value's row (+U), a
// tombstone a -D of the row its JSON key fills (the PRIMARY KEY columns,
// the others NULL); the Upsert operator after the scan turns them into a
// changelog.
func (d *kafkaDecoder) changes(r *kgo.Record) ([]ops.Change, error) {
	if d.o.Upsert {
		if r.Value != nil {
			row, err := d.row(r)
			if err != nil {
				return nil, err
			}
			return []ops.Change{{Kind: ops.UpdateAfter, Row: row}}, nil
		}
		if r.Key == nil {
			return nil, fmt.Errorf("a tombstone without a key")
		}
		kr, err := DecodeJSON(d.phys, r.Key)
		if err != nil {
			return nil, fmt.Errorf("key: %w", err)
		}
		return []ops.Change{{Kind: ops.Delete, Row: d.withMeta(r, kr)}}, nil
	}
	if d.o.Format != FormatDebezium {
		row, err := d.row(r)
		if err != nil {
			return nil, err
		}
		return []ops.Change{{Kind: ops.Insert, Row: row}}, nil
	}
	chs, err := decodeDebezium(d.phys, r.Value)
	if err != nil {
		return nil, err
	}
	for i := range chs {
		chs[i].Row = d.withMeta(r, chs[i].Row)
	}
	return chs, nil
}

func (d *kafkaDecoder) row(r *kgo.Record) (types.Row, error) {
	var pr types.Row
	var err error
	switch d.o.Format {
	case FormatCSV:
		pr, err = d.csvRow(r.Value)
	case FormatRaw:
		pr, err = rawRow(r.Value)
	default:
		pr, err = DecodeJSON(d.phys, r.Value)
	}
	if err != nil {
		return nil, err
	}
	return d.withMeta(r, pr), nil
}

// csvRow parses a message holding one CSV record (a final line break is
// allowed): fields in the physical columns' order, an empty one NULL.
func (d *kafkaDecoder) csvRow(v []byte) (types.Row, error) {
	line := strings.TrimSuffix(strings.TrimSuffix(string(v), "\n"), "\r")
	if strings.ContainsAny(line, "\r\n") {
		return nil, fmt.Errorf("a csv message holds one record, got a line break inside")
	}
	f, err := d.csv.splitRecord(line)
	if err != nil {
		return nil, err
	}
	if len(f) != len(d.phys.Columns) {
		return nil, fmt.Errorf("%d fields, want %d", len(f), len(d.phys.Columns))
	}
	return csvFields(d.phys.Columns, f, nil)
}

// rawRow is the whole value as the one VARCHAR column.
func rawRow(v []byte) (types.Row, error) {
	if !utf8.Valid(v) {
		return nil, fmt.Errorf("value is not UTF-8 text")
	}
	return types.Row{types.NewVarchar(string(v))}, nil
}

// withMeta spreads a row of the physical columns over the table's
// columns and fills the METADATA ones from the record.
func (d *kafkaDecoder) withMeta(r *kgo.Record, pr types.Row) types.Row {
	if len(d.meta) == 0 {
		return pr
	}
	row := make(types.Row, len(d.t.Columns))
	for i, c := range d.pcols {
		row[c] = pr[i]
	}
	for _, c := range d.meta {
		row[c] = kafkaMetaValue(r, d.t.Metadata[c], d.t.Columns[c].Type)
	}
	return row
}

// bad handles a record that did not decode: on_error = 'fail' (the
// default) fails naming topic, partition, offset and the field; 'skip'
// counts it in the rejects.
func (d *kafkaDecoder) bad(r *kgo.Record, err error) error {
	if !d.o.Skip {
		return fmt.Errorf("table %s: topic %q partition %d offset %d: %w", d.t.Name, r.Topic, r.Partition, r.Offset, err)
	}
	if d.env.Rejects != nil {
		d.env.Rejects.Add(1)
	}
	return nil
}

// kafkaEncoder turns a change into a message: format json (inserts only),
// debezium-json (Flink's envelope: +I and +U are op "c" with after, -U
// and -D op "d" with before), or upsert-kafka (key: the PRIMARY KEY
// columns as a JSON object; value: the row, or a tombstone on -D and -U;
// KafkaSink.Write drops a -U that its +U follows, as Flink's upsert sink
// does, and keeps one whose +U a filter removed).
type kafkaEncoder struct {
	t     *Table
	o     *KafkaOptions
	keys  [][]byte // JSON-encoded names of the value's columns
	vcols []int    // value column i is row column vcols[i]
	kkeys [][]byte
	tsCol int // the METADATA FROM 'timestamp' column, -1 without
}

func newKafkaEncoder(t *Table, o *KafkaOptions) *kafkaEncoder {
	e := &kafkaEncoder{t: t, o: o, tsCol: -1}
	for i, c := range t.Columns {
		if m := t.metadataKey(i); m != "" {
			if m == "timestamp" {
				e.tsCol = i
			}
			continue
		}
		k, _ := json.Marshal(c.Name)
		e.keys = append(e.keys, k)
		e.vcols = append(e.vcols, i)
	}
	for _, c := range o.KeyCols {
		k, _ := json.Marshal(t.Columns[c].Name)
		e.kkeys = append(e.kkeys, k)
	}
	return e
}

// kafkaMsg is one message to produce (value nil: a tombstone).
type kafkaMsg struct {
	key, value []byte
	ts         int64 // ms; 0: the producer's time
}

// encode returns the change's message.
func (e *kafkaEncoder) encode(ch ops.Change) kafkaMsg {
	var m kafkaMsg
	if e.tsCol >= 0 && !ch.Row[e.tsCol].IsNull() {
		m.ts = ch.Row[e.tsCol].Int()
	}
	switch {
	case e.o.Upsert:
		m.key = e.jsonObject(nil, e.kkeys, e.o.KeyCols, ch.Row)
		if !ch.Kind.Retracts() {
			m.value = e.jsonObject(nil, e.keys, e.vcols, ch.Row)
		}
	case e.o.Format == "debezium-json":
		b := []byte(`{"before":`)
		if ch.Kind.Retracts() {
			b = e.jsonObject(b, e.keys, e.vcols, ch.Row)
			b = append(b, `,"after":null,"op":"d"}`...)
		} else {
			b = append(b, `null,"after":`...)
			b = e.jsonObject(b, e.keys, e.vcols, ch.Row)
			b = append(b, `,"op":"c"}`...)
		}
		m.value = b
	case e.o.Format == FormatCSV:
		var b []byte
		for i, c := range e.vcols {
			if i > 0 {
				b = utf8.AppendRune(b, e.o.CSVDelim)
			}
			b = appendCSVValue(b, ch.Row[c], e.o.CSVDelim)
		}
		m.value = b
	case e.o.Format == FormatRaw:
		if v := ch.Row[e.vcols[0]]; !v.IsNull() {
			m.value = []byte(v.Str())
		}
	default:
		m.value = e.jsonObject(nil, e.keys, e.vcols, ch.Row)
	}
	return m
}

func (e *kafkaEncoder) jsonObject(b []byte, keys [][]byte, cols []int, row types.Row) []byte {
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, k...)
		b = append(b, ':')
		b = AppendJSONValue(b, row[cols[i]])
	}
	return append(b, '}')
}
