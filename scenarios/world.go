package scenarios

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"clink/engine"
	"clink/engine/async"
	"clink/engine/counter"
	"clink/engine/event"
	"clink/state"
	"clink/state/mempool"
	"clink/state/stateuri"
)

// Config is what `config` sets; it applies to the next `operator` and
// every later restore.
type Config struct {
	State       string        // state URI: memory:// or disagg-local://...
	HotMaxBytes int64         // hot-tier budget (0: unbounded)
	Latency     async.Latency // remote read and commit latency
	MaxInFlight int           // per-subtask in-flight cap (0: engine default)
	IOThreads   int           // recorded; the simulated executor serves all
	Parallelism int
	Seed        uint64 // hash seed and the simulation's seed
	Coalesce    bool
	Deadline    bool
	WarmRestore bool
}

func defaultConfig(seed uint64) Config {
	return Config{State: "disagg-local://", Latency: async.Fixed(0), Parallelism: 1, Seed: seed, IOThreads: 1}
}

func (c Config) remote() bool {
	return strings.HasPrefix(c.State, stateuri.DisaggLocal+"://") || strings.HasPrefix(c.State, stateuri.RemoteRead+"://")
}

func (c Config) String() string {
	s := fmt.Sprintf("state=%s parallelism=%d seed=%d latency=%s", c.State, c.Parallelism, c.Seed, c.Latency)
	if c.remote() {
		s += fmt.Sprintf(" hot_max_bytes=%s io_threads=%d", budgetText(c.HotMaxBytes), c.IOThreads)
	}
	if c.MaxInFlight > 0 {
		s += fmt.Sprintf(" inflight=%d", c.MaxInFlight)
	}
	if c.Coalesce {
		s += " coalesce"
	}
	if c.Deadline {
		s += " deadline"
	}
	if c.WarmRestore {
		s += " warm_restore"
	}
	return s
}

func budgetText(n int64) string {
	if n == 0 {
		return "unbounded"
	}
	return fmt.Sprintf("%dB", n)
}

// world is everything a scenario drives: the input log and the durable
// pool (which survive a crash), the sink, and the running job with its
// simulation (which do not).
type world struct {
	cfg         Config
	opCfg       Config // the configuration the operator was set up with
	log         *engine.Log[counter.Rec]
	durable     durablePool
	rules       *keyRules
	sink        *collector
	bus         *event.Bus
	trace       *tracer
	job         *engine.Job[counter.Rec]
	sim         *async.Sim
	pool        *faultPool
	incarnation int
	parallelism int
	failed      error // the job's failure, until a restore
	records     []logEntry
	ckptSeen    int // checkpoints of this incarnation already reported
}

// logEntry mirrors one element appended to the log.
type logEntry struct {
	data  bool
	key   string
	value int64
	wm    int64
}

// start builds incarnation n of the job, restoring checkpoint id (0: a
// fresh start) at parallelism p.
func (w *world) start(id state.CheckpointID, p int) error {
	cfg := w.opCfg
	w.incarnation++
	seed := cfg.Seed + uint64(w.incarnation-1)*0x9e3779b9
	sim := async.NewSim(seed, cfg.Latency)
	lp := mempool.WithLatency(w.durable, cfg.Latency, sim, seed)
	pool := &faultPool{LatencyPool: lp, durable: w.durable, rules: w.rules, clock: sim}
	w.sink.incarnation = w.incarnation
	jc := engine.JobConfig{
		Name: "scenario", Parallelism: 1, HashSeed: cfg.Seed, MaxInFlight: cfg.MaxInFlight,
		Pool: pool, Restore: id, Bus: w.bus, Clock: sim, Persist: sim, Idle: func() bool { return idle(sim) },
		NewBackend: func(stage string, sub, par int) (state.Backend, error) {
			return w.backend(pool, sim, stage, sub, par)
		},
	}
	ccfg := counter.Config{HashSeed: cfg.Seed, Coalesce: cfg.Coalesce, Deadline: cfg.Deadline}
	j, err := engine.NewJob(counterGraph(w.log, p, cfg.Seed, ccfg), engine.Sink[counter.Rec](w.sink), jc)
	if err != nil {
		return fmt.Errorf("start job: %w", err)
	}
	w.job, w.sim, w.pool, w.parallelism, w.failed, w.ckptSeen = j, sim, pool, p, nil, 0
	w.trace.reset()
	return nil
}

func (w *world) backend(pool *faultPool, sim *async.Sim, stage string, sub, par int) (state.Backend, error) {
	o := state.Options{Name: stage, Bus: w.bus, HashSeed: w.opCfg.Seed}.ForSubtask(sub, par)
	if !w.opCfg.remote() {
		return state.NewMemoryBackend(o, pool)
	}
	return state.NewRemoteReadBackend(state.RemoteOptions{
		Options: o, Pool: pool, Executor: sim, IOThreads: w.opCfg.IOThreads,
		HotMaxBytes: w.opCfg.HotMaxBytes, WarmRestore: w.opCfg.WarmRestore,
	})
}

// counterGraph is source log -> hash exchange -> counter at parallelism p.
func counterGraph(log *engine.Log[counter.Rec], p int, seed uint64, cfg counter.Config) engine.Graph[counter.Rec] {
	return engine.Graph[counter.Rec]{Stages: []engine.StageSpec[counter.Rec]{
		{Name: "log", Parallelism: 1, NewSource: log.Source},
		{Name: "count", Parallelism: p, OpID: 1,
			NewOperator: func(int) engine.Operator[counter.Rec] { return counter.New(cfg) },
			Inputs: []engine.Edge[counter.Rec]{{From: 0, Partitioning: engine.Hash,
				Key: func(r counter.Rec) uint64 { return state.Hash(seed, r.Key) }}}},
	}}
}

// crash drops everything in memory: the job, its hot tiers, its in-flight
// reads and uncommitted checkpoints (the simulation is discarded, so a
// commit still in flight never lands). The log and the pool stay.
func (w *world) crash() (inFlight int, err error) {
	if w.job == nil {
		return 0, errors.New("no job is running")
	}
	for _, r := range w.job.Runners() {
		if c := r.Controller(); c != nil {
			inFlight += c.InFlight()
		}
	}
	err = w.job.Close()
	w.job, w.sim, w.pool = nil, nil, nil
	return inFlight, err
}

// restore starts a new incarnation from checkpoint id (0 with latest: the
// pool's head) and rolls the sink back to what that checkpoint covered.
func (w *world) restore(id state.CheckpointID, latest bool, p int) (state.CheckpointID, int, error) {
	ctx := context.Background()
	if latest {
		head, err := w.durable.Latest(ctx)
		if err != nil {
			return 0, 0, fmt.Errorf("latest checkpoint: %w", err)
		}
		id = head
	}
	if err := w.durable.Restore(ctx, id); err != nil {
		return 0, 0, fmt.Errorf("restore checkpoint %d: %w", id, err)
	}
	offset, err := w.position(ctx, id)
	if err != nil {
		return 0, 0, err
	}
	w.sink.rollback(w.countsBefore(offset))
	if err := w.start(id, p); err != nil {
		return 0, 0, err
	}
	return id, offset, nil
}

// position is the log offset checkpoint id recorded (0 for none).
func (w *world) position(ctx context.Context, id state.CheckpointID) (int, error) {
	if id == 0 {
		return 0, nil
	}
	got, err := w.durable.GetMany(ctx, []state.Key{{Op: engine.SourcePositionOp, Key: []byte("log/0")}})
	if err != nil {
		return 0, fmt.Errorf("read the source position of checkpoint %d: %w", id, err)
	}
	if !got[0].Found || len(got[0].Value) != 8 {
		return 0, fmt.Errorf("checkpoint %d has no source position", id)
	}
	var n int
	for _, b := range got[0].Value {
		n = n<<8 | int(b)
	}
	return n, nil
}

// countsBefore counts each key's records in the first n log elements.
func (w *world) countsBefore(n int) map[string]int {
	out := map[string]int{}
	for _, r := range w.records[:min(n, len(w.records))] {
		if r.data {
			out[r.key]++
		}
	}
	return out
}

// idle is the job's Idle hook: it runs the earliest simulated event and
// every other event due at the same virtual instant, so completions that
// land together reach the controller as one ready batch (which is what
// deadline-aware ordering sorts). It reports whether anything ran.
func idle(sim *async.Sim) bool {
	if !sim.Step() {
		return false
	}
	sim.AdvanceTo(sim.Now())
	return true
}
