package connector

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"clink/sql/ast"
	"clink/sql/types"
)

// KafkaOptions is a kafka or upsert-kafka table's WITH clause, checked.
// Option names are Flink's, so a Flink DDL pastes as it is.
type KafkaOptions struct {
	Topic   string
	Brokers []string // properties.bootstrap.servers
	Group   string   // properties.group.id
	// Startup is scan.startup.mode: earliest-offset, latest-offset,
	// group-offsets, timestamp or specific-offsets.
	Startup         string
	StartupMillis   int64           // scan.startup.timestamp-millis
	SpecificOffsets map[int32]int64 // scan.startup.specific-offsets
	// BoundedMode is scan.bounded.mode: unbounded, latest-offset or
	// timestamp (scan.bounded.timestamp-millis).
	BoundedMode   string
	BoundedMillis int64
	// Format is the value format: json, debezium-json, csv or raw
	// (upsert-kafka: json keys and values).
	Format string
	// CSVDelim is csv.field-delimiter (format csv; default ',').
	CSVDelim       rune
	ReadCommitted  bool   // properties.isolation.level (default read_committed)
	AutoReset      string // properties.auto.offset.reset: earliest, latest or none
	Parallelism    int    // scan.parallelism: source subtasks (default 1)
	Skip           bool   // on_error = 'skip'
	ConnectTimeout time.Duration
	// MaxOutage (connect.max-outage; default the job's --max-outage, 10m;
	// 0: forever) is how long a source waits for an unreachable broker and
	// an exactly-once sink keeps retrying its transactions.
	MaxOutage time.Duration
	// Discovery is scan.topic-partition-discovery.interval (default 5m,
	// Flink's; 0: off): how often an unbounded source looks for
	// partitions added to the topic, which it reads from earliest.
	Discovery time.Duration
	// Delivery is sink.delivery-guarantee: exactly-once, at-least-once or
	// none; "" leaves it to the state URI (exactly-once on a durable one).
	Delivery    string
	TxnPrefix   string // sink.transactional-id-prefix
	CommitTopic string // sink.commit-topic: the exactly-once sink's commit markers
	Upsert      bool   // connector upsert-kafka
	// KeyCols are the PRIMARY KEY's column indexes (upsert-kafka's key).
	KeyCols []int
}

// Bounded reports whether a scan of the table ends (scan.bounded.mode).
func (o *KafkaOptions) Bounded() bool { return o.BoundedMode != "unbounded" }

// kafkaKnown lists every option a kafka table takes, with its meaning
// (the unknown-option error lists the names).
var kafkaKnown = map[string]bool{
	"connector": true, "topic": true, "properties.bootstrap.servers": true, "properties.group.id": true,
	"properties.isolation.level": true, "properties.auto.offset.reset": true,
	"scan.startup.mode": true, "scan.startup.timestamp-millis": true, "scan.startup.specific-offsets": true,
	"scan.bounded.mode": true, "scan.bounded.timestamp-millis": true, "scan.parallelism": true,
	"format": true, "csv.field-delimiter": true, "key.format": true, "value.format": true, "on_error": true, "connect.timeout": true, "connect.max-outage": true,
	"scan.topic-partition-discovery.interval": true, IdleTimeoutOption: true, "window.allowed-lateness": true,
	"sink.delivery-guarantee": true, "sink.transactional-id-prefix": true, "sink.commit-topic": true,
}

// kafkaMetaTypes are the METADATA keys a kafka table reads, with the
// column types each may have.
var kafkaMetaTypes = map[string][]types.Kind{
	"timestamp": {types.KindTimestamp},
	"partition": {types.KindInt, types.KindBigInt},
	"offset":    {types.KindBigInt},
	"key":       {types.KindVarchar},
	"topic":     {types.KindVarchar},
}

// ParseKafka checks a kafka / upsert-kafka table's options and columns;
// every error is positioned at the option or column at fault.
func ParseKafka(t *Table) (*KafkaOptions, error) {
	o := &KafkaOptions{Upsert: t.Connector == "upsert-kafka", ReadCommitted: true, AutoReset: "latest",
		Parallelism: 1, ConnectTimeout: 10 * time.Second, MaxOutage: 10 * time.Minute, Discovery: 5 * time.Minute, BoundedMode: "unbounded", Startup: "group-offsets"}
	var unknown []string
	for k := range t.Options {
		if !kafkaKnown[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		known := make([]string, 0, len(kafkaKnown))
		for k := range kafkaKnown {
			known = append(known, k)
		}
		sort.Strings(known)
		return nil, t.OptErr(unknown[0], "unknown option for connector %s (known: %s)", t.Connector, strings.Join(known, ", "))
	}
	var ok bool
	if o.Topic, ok = t.Opt("topic"); !ok || strings.TrimSpace(o.Topic) == "" {
		return nil, ast.Errorf(t.At, "table %s: connector %s needs a topic option", t.Name, t.Connector)
	}
	servers, ok := t.Opt("properties.bootstrap.servers")
	if !ok {
		return nil, ast.Errorf(t.At, "table %s: connector %s needs 'properties.bootstrap.servers' (host:port, comma-separated)", t.Name, t.Connector)
	}
	for _, s := range strings.Split(servers, ",") {
		s = strings.TrimSpace(s)
		if _, port, found := strings.Cut(s, ":"); !found || port == "" {
			return nil, t.OptErr("properties.bootstrap.servers", "want host:port, got %q", s)
		}
		o.Brokers = append(o.Brokers, s)
	}
	o.Group, _ = t.Opt("properties.group.id")
	if err := o.parseScan(t); err != nil {
		return nil, err
	}
	if err := o.parseFormat(t); err != nil {
		return nil, err
	}
	if err := o.parseSink(t); err != nil {
		return nil, err
	}
	if err := o.checkColumns(t); err != nil {
		return nil, err
	}
	return o, nil
}

func (o *KafkaOptions) parseScan(t *Table) error {
	if o.Upsert {
		o.Startup = "earliest-offset"
		if _, set := t.Opt("scan.startup.mode"); set {
			return t.OptErr("scan.startup.mode", "upsert-kafka always reads from the earliest offset (as Flink's)")
		}
	}
	if v, ok := t.Opt("scan.startup.mode"); ok {
		o.Startup = strings.ToLower(strings.TrimSpace(v))
	}
	switch o.Startup {
	case "earliest-offset", "latest-offset", "specific-offsets":
	case "group-offsets":
		if o.Group == "" {
			if _, set := t.Opt("scan.startup.mode"); set {
				return t.OptErr("scan.startup.mode", "group-offsets needs 'properties.group.id'")
			}
			o.Startup = "earliest-offset" // no group: Flink's default does not apply
		}
	case "timestamp":
		ms, err := t.IntOpt("scan.startup.timestamp-millis", -1)
		if err != nil {
			return err
		}
		if ms < 0 {
			return t.OptErr("scan.startup.mode", "timestamp needs 'scan.startup.timestamp-millis' (ms since the epoch)")
		}
		o.StartupMillis = ms
	default:
		return t.OptErr("scan.startup.mode", "want earliest-offset, latest-offset, group-offsets, timestamp or specific-offsets, got %q", o.Startup)
	}
	if v, ok := t.Opt("scan.startup.specific-offsets"); ok {
		if o.Startup != "specific-offsets" {
			return t.OptErr("scan.startup.specific-offsets", "applies only with 'scan.startup.mode' = 'specific-offsets'")
		}
		m, err := parseSpecificOffsets(v)
		if err != nil {
			return t.OptErr("scan.startup.specific-offsets", "%v", err)
		}
		o.SpecificOffsets = m
	} else if o.Startup == "specific-offsets" {
		return t.OptErr("scan.startup.mode", "specific-offsets needs 'scan.startup.specific-offsets' ('partition:0,offset:42;partition:1,offset:300')")
	}
	if v, ok := t.Opt("scan.bounded.mode"); ok {
		o.BoundedMode = strings.ToLower(strings.TrimSpace(v))
	}
	switch o.BoundedMode {
	case "unbounded", "latest-offset":
	case "timestamp":
		ms, err := t.IntOpt("scan.bounded.timestamp-millis", -1)
		if err != nil {
			return err
		}
		if ms < 0 {
			return t.OptErr("scan.bounded.mode", "timestamp needs 'scan.bounded.timestamp-millis' (ms since the epoch)")
		}
		o.BoundedMillis = ms
	default:
		return t.OptErr("scan.bounded.mode", "want unbounded, latest-offset or timestamp, got %q", o.BoundedMode)
	}
	if v, ok := t.Opt("properties.isolation.level"); ok {
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "read_committed":
		case "read_uncommitted":
			o.ReadCommitted = false
		default:
			return t.OptErr("properties.isolation.level", "want read_committed or read_uncommitted, got %q", v)
		}
	}
	if v, ok := t.Opt("properties.auto.offset.reset"); ok {
		o.AutoReset = strings.ToLower(strings.TrimSpace(v))
		if o.AutoReset != "earliest" && o.AutoReset != "latest" && o.AutoReset != "none" {
			return t.OptErr("properties.auto.offset.reset", "want earliest, latest or none, got %q", v)
		}
	}
	p, err := t.IntOpt("scan.parallelism", 1)
	if err != nil {
		return err
	}
	if p < 1 || p > 1024 {
		return t.OptErr("scan.parallelism", "want 1 to 1024 source subtasks, got %d", p)
	}
	o.Parallelism = int(p)
	switch v, _ := t.Opt("on_error"); strings.ToLower(v) {
	case "", "fail":
	case "skip":
		o.Skip = true
	default:
		return t.OptErr("on_error", "want 'fail' or 'skip', got %q", v)
	}
	if v, ok := t.Opt("connect.timeout"); ok {
		d, err := time.ParseDuration(strings.TrimSpace(v))
		if err != nil || d <= 0 {
			return t.OptErr("connect.timeout", "want a positive duration such as '10s', got %q", v)
		}
		o.ConnectTimeout = d
	}
	if v, ok := t.Opt("connect.max-outage"); ok {
		d, err := time.ParseDuration(strings.TrimSpace(v))
		if err != nil || d < 0 {
			return t.OptErr("connect.max-outage", "want a duration such as '10m' (0: retry forever), got %q", v)
		}
		o.MaxOutage = d
	}
	if v, ok := t.Opt("scan.topic-partition-discovery.interval"); ok {
		d, err := time.ParseDuration(strings.TrimSpace(v))
		if err != nil || d < 0 {
			return t.OptErr("scan.topic-partition-discovery.interval", "want a duration such as '5m' (0: off), got %q", v)
		}
		o.Discovery = d
	}
	return nil
}

// jobOutage makes the job's outage limit (clink run --max-outage) the
// table's connect.max-outage unless the table sets its own: d > 0 is the
// limit, d < 0 waits forever, 0 keeps the connector's default (10m).
func (o *KafkaOptions) jobOutage(t *Table, d time.Duration) {
	if _, set := t.Opt("connect.max-outage"); set || d == 0 {
		return
	}
	o.MaxOutage = max(d, 0)
}

// parseSpecificOffsets reads Flink's 'partition:0,offset:42;partition:1,offset:300'.
func parseSpecificOffsets(v string) (map[int32]int64, error) {
	m := map[int32]int64{}
	for _, part := range strings.Split(v, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		var p, off int64 = -1, -1
		for _, kv := range strings.Split(part, ",") {
			k, val, _ := strings.Cut(strings.TrimSpace(kv), ":")
			n, err := strconv.ParseInt(strings.TrimSpace(val), 10, 64)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("want 'partition:N,offset:M;...', got %q", part)
			}
			switch strings.TrimSpace(k) {
			case "partition":
				p = n
			case "offset":
				off = n
			default:
				return nil, fmt.Errorf("want 'partition:N,offset:M;...', got %q", part)
			}
		}
		if p < 0 || off < 0 || p > 1<<31-1 {
			return nil, fmt.Errorf("want 'partition:N,offset:M;...', got %q", part)
		}
		m[int32(p)] = off
	}
	if len(m) == 0 {
		return nil, fmt.Errorf("no partition given in %q", v)
	}
	return m, nil
}

func (o *KafkaOptions) parseFormat(t *Table) error {
	if o.Upsert {
		if _, set := t.Opt("format"); set {
			return t.OptErr("format", "upsert-kafka takes 'key.format' and 'value.format' (json), not format")
		}
		for _, k := range []string{"key.format", "value.format"} {
			if v, ok := t.Opt(k); ok && strings.ToLower(strings.TrimSpace(v)) != "json" {
				return t.OptErr(k, "want json, got %q", v)
			}
		}
		o.Format = "json"
		if _, set := t.Opt("csv.field-delimiter"); set {
			return t.OptErr("csv.field-delimiter", "applies to connector kafka with format csv")
		}
		return nil
	}
	for _, k := range []string{"key.format", "value.format"} {
		if _, set := t.Opt(k); set {
			return t.OptErr(k, "applies to connector upsert-kafka; connector kafka takes format")
		}
	}
	v, ok := t.Opt("format")
	if !ok {
		return ast.Errorf(t.At, "table %s: connector kafka needs a format option (json, debezium-json, csv or raw)", t.Name)
	}
	o.Format = strings.ToLower(strings.TrimSpace(v))
	switch o.Format {
	case "json", FormatDebezium:
	case FormatCSV:
		d, err := csvDelimiter(t, "csv.field-delimiter")
		if err != nil {
			return err
		}
		if d == '"' || d == '\r' || d == '\n' {
			return t.OptErr("csv.field-delimiter", "cannot be a quote or a line break")
		}
		o.CSVDelim = d
	case FormatRaw:
		if err := checkRawColumns(t); err != nil {
			return err
		}
	default:
		return t.OptErr("format", "want json, debezium-json, csv or raw, got %q", v)
	}
	if _, set := t.Opt("csv.field-delimiter"); set && o.Format != FormatCSV {
		return t.OptErr("csv.field-delimiter", "applies to format csv")
	}
	return nil
}

// checkRawColumns: format raw reads and writes the whole message value as
// the table's one physical column, a VARCHAR.
func checkRawColumns(t *Table) error {
	var phys []int
	for i := range t.Columns {
		if t.metadataKey(i) == "" {
			phys = append(phys, i)
		}
	}
	if len(phys) != 1 || t.Columns[phys[0]].Type.Kind != types.KindVarchar {
		return ast.Errorf(t.At, "table %s: format raw needs exactly one physical column, a VARCHAR (the message value); the others must be METADATA", t.Name)
	}
	return nil
}

func (o *KafkaOptions) parseSink(t *Table) error {
	if v, ok := t.Opt("sink.delivery-guarantee"); ok {
		o.Delivery = strings.ToLower(strings.TrimSpace(v))
		if o.Delivery != "exactly-once" && o.Delivery != "at-least-once" && o.Delivery != "none" {
			return t.OptErr("sink.delivery-guarantee", "want exactly-once, at-least-once or none, got %q", v)
		}
	}
	o.TxnPrefix = "clink-" + t.Name
	if v, ok := t.Opt("sink.transactional-id-prefix"); ok {
		if strings.TrimSpace(v) == "" {
			return t.OptErr("sink.transactional-id-prefix", "must not be empty")
		}
		o.TxnPrefix = v
	}
	o.CommitTopic = "clink-commits"
	if v, ok := t.Opt("sink.commit-topic"); ok {
		if strings.TrimSpace(v) == "" || v == o.Topic {
			return t.OptErr("sink.commit-topic", "want a topic other than the table's, got %q", v)
		}
		o.CommitTopic = v
	}
	return nil
}

func (o *KafkaOptions) checkColumns(t *Table) error {
	for i, m := range t.Metadata {
		if m == "" {
			continue
		}
		kinds, ok := kafkaMetaTypes[m]
		if !ok {
			if m == "headers" {
				return ast.Errorf(t.ColumnPos[i], "table %s: column %s: METADATA FROM 'headers' is not supported (clink has no MAP type)", t.Name, t.Columns[i].Name)
			}
			return ast.Errorf(t.ColumnPos[i], "table %s: column %s: unknown METADATA key %q (known: key, offset, partition, timestamp, topic)", t.Name, t.Columns[i].Name, m)
		}
		good := false
		for _, k := range kinds {
			good = good || t.Columns[i].Type.Kind == k
		}
		if !good {
			return ast.Errorf(t.ColumnPos[i], "table %s: column %s: METADATA FROM '%s' must be %s, got %s", t.Name, t.Columns[i].Name, m, types.Type{Kind: kinds[0]}, t.Columns[i].Type)
		}
	}
	if !o.Upsert {
		return nil
	}
	if len(t.PrimaryKey) == 0 {
		return ast.Errorf(t.At, "table %s: upsert-kafka needs a PRIMARY KEY (the message key), e.g. PRIMARY KEY (id) NOT ENFORCED", t.Name)
	}
	o.KeyCols = t.PrimaryKey
	return nil
}
