package scenarios

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"clink/engine/counter"
	"clink/state/stateuri"
)

// MaxParallelism bounds a scenario's parallelism.
const MaxParallelism = 64

// config sets the configuration the next `operator` (and later restores)
// use, and prints the effective configuration.
func (r *Replayer) config(d *Directive, a *args) (string, error) {
	cfg := r.w.cfg
	if uri, ok, err := a.str("state", ""); err != nil {
		return "", err
	} else if ok {
		if err := cfg.setState(uri); err != nil {
			return "", argErr("state", "%v", err)
		}
	}
	var err error
	if n, ok, e := a.bytes("hot_max_bytes", 0); e != nil {
		return "", e
	} else if ok {
		cfg.HotMaxBytes = n
	}
	if l, ok, e := a.latency("latency"); e != nil {
		return "", e
	} else if ok {
		cfg.Latency = l
	}
	n, err := a.integer("inflight", int64(cfg.MaxInFlight), 1)
	if err != nil {
		return "", err
	}
	cfg.MaxInFlight = int(n)
	if n, err = a.integer("io_threads", int64(cfg.IOThreads), 1); err != nil {
		return "", err
	}
	cfg.IOThreads = int(n)
	if n, err = a.integer("parallelism", int64(cfg.Parallelism), 1); err != nil {
		return "", err
	}
	if n > MaxParallelism {
		return "", argErr("parallelism", "at most %d in a scenario", MaxParallelism)
	}
	cfg.Parallelism = int(n)
	if n, err = a.integer("seed", int64(cfg.Seed), 0); err != nil {
		return "", err
	}
	if r.w.job != nil && uint64(n) != r.w.opCfg.Seed {
		return "", errors.New("the seed (the partitioning hash seed) cannot change once the operator runs")
	}
	cfg.Seed = uint64(n)
	if cfg.Coalesce, err = a.boolean("coalesce", cfg.Coalesce); err != nil {
		return "", err
	}
	if cfg.Deadline, err = a.boolean("deadline", cfg.Deadline); err != nil {
		return "", err
	}
	r.w.cfg = cfg
	return cfg.String(), nil
}

// setState reads a state URI with stateuri.Parse. Its knobs become the
// config's; an absent hot_max_bytes means unbounded (not the machine-sized
// default) so outputs do not depend on the machine.
func (c *Config) setState(uri string) error {
	sc, _, err := stateuri.Parse(uri)
	if err != nil {
		return err
	}
	u, err := url.Parse(uri)
	if err != nil {
		return err
	}
	q := u.Query()
	switch sc.Scheme {
	case stateuri.Memory:
		c.State = "memory://"
		return nil
	case stateuri.DisaggLocal:
		c.State = "disagg-local://"
	case stateuri.RemoteRead:
		if q.Has("endpoint") {
			return errors.New("remote-read:// in a scenario is served by an in-process S3 (gofakes3): drop endpoint=")
		}
		c.State = fmt.Sprintf("remote-read://%s/%s", sc.Bucket, sc.Prefix)
	default:
		return fmt.Errorf("scenarios support memory://, disagg-local:// and remote-read:// (in-process S3), not %s://", sc.Scheme)
	}
	c.IOThreads, c.WarmRestore = sc.IOThreads, sc.WarmRestore
	c.HotMaxBytes = 0
	if q.Has("hot_max_bytes") {
		c.HotMaxBytes = sc.HotMaxBytes
	}
	if q.Has("latency") {
		c.Latency = sc.Latency
	}
	return nil
}

// operator sets up a built-in operator job: the source log, a hash
// exchange on the key, the operator at the configured parallelism, and a
// collecting sink.
func (r *Replayer) operator(d *Directive, a *args) (string, error) {
	names := a.bare()
	if len(names) != 1 || names[0] != "counter" {
		return "", argErr(strings.Join(names, " "), "want `operator counter` (the built-in keyed counter)")
	}
	w := r.w
	if w.job != nil || w.incarnation > 0 {
		return "", errors.New("the operator is already set up (crash and restore to rebuild it)")
	}
	if r.q != nil {
		return "", errors.New("this scenario drives a streaming SQL query: the counter needs its own file")
	}
	w.opCfg = w.cfg
	if strings.HasPrefix(w.cfg.State, stateuri.RemoteRead+"://") {
		bucket, prefix, _ := strings.Cut(strings.TrimPrefix(w.cfg.State, stateuri.RemoteRead+"://"), "/")
		d, err := newS3Durable(bucket, prefix, w.cfg.Seed)
		if err != nil {
			return "", err
		}
		w.durable = d
	}
	if err := w.start(0, w.cfg.Parallelism); err != nil {
		return "", err
	}
	return w.describe(), nil
}

// describe names the job's shape and the path each subtask runs.
func (w *world) describe() string {
	path := "sync"
	runners := w.job.Runners()
	if len(runners) > 0 && runners[0].Async() {
		path = "async"
		if c := runners[0].Controller(); c != nil && w.opCfg.Deadline && c.Order() == 0 {
			path += " (deadline ordering inert: reads are coalesced)"
		}
	}
	return fmt.Sprintf("log -> hash(key) -> counter x%d (%s path, %s) -> sink", w.parallelism, path, w.opCfg.State)
}

// insert appends records to the source log, one `key value` per line (a
// missing value is 1).
func (r *Replayer) insert(d *Directive, _ *args) (string, error) {
	if r.w.job == nil && r.w.incarnation == 0 {
		return "", errors.New("no operator: run `operator counter` first")
	}
	if d.Input == "" {
		return "", &ParseError{File: d.File, Line: d.Line, Col: 1, Msg: "insert needs an input block of `key value` lines"}
	}
	var recs []counter.Rec
	for i, line := range strings.Split(d.Input, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		v := int64(1)
		bad := len(f) > 2
		if len(f) == 2 {
			n, err := strconv.ParseInt(f[1], 10, 64)
			v, bad = n, bad || err != nil
		}
		if bad {
			return "", &ParseError{File: d.File, Line: d.inputLine + i, Col: 1,
				Msg: fmt.Sprintf("insert: want `key value` (an integer value), got %q", line)}
		}
		recs = append(recs, counter.Rec{Key: []byte(f[0]), Value: v})
	}
	for _, rec := range recs {
		r.w.log.Append(rec)
		r.w.records = append(r.w.records, logEntry{data: true, key: string(rec.Key), value: rec.Value})
	}
	return fmt.Sprintf("appended %d records (log length %d)", len(recs), len(r.w.records)), nil
}

// watermark appends a watermark (event time in ms) to the source log.
func (r *Replayer) watermark(d *Directive, a *args) (string, error) {
	if r.w.job == nil && r.w.incarnation == 0 {
		return "", errors.New("no operator: run `operator counter` first")
	}
	bare := a.bare()
	var ts int64
	var err error
	switch {
	case len(bare) == 1:
		if ts, err = strconv.ParseInt(bare[0], 10, 64); err != nil {
			return "", argErr(bare[0], "want `watermark N` with an integer event time")
		}
	case len(bare) == 0 && a.has("ts"):
		if ts, err = a.integer("ts", 0, -1<<62); err != nil {
			return "", err
		}
	default:
		return "", argErr("", "want `watermark N` or `watermark ts=N`")
	}
	r.w.log.AppendWatermark(ts)
	r.w.records = append(r.w.records, logEntry{wm: ts})
	return fmt.Sprintf("appended watermark %d (log length %d)", ts, len(r.w.records)), nil
}
