package plan

import (
	"fmt"
	"time"

	"clink/engine"
	"clink/sql/connector"
	"clink/sql/expr"
	"clink/sql/ops"
	"clink/sql/types"
	"clink/state"
)

// BuildOptions configure the physical plan.
type BuildOptions struct {
	Parallelism int // keyed operators' parallelism (>= 1)
	HashSeed    uint64
	Env         connector.Env
	// Lookup is what lookup joins need from the session (build_lookup.go).
	Lookup ops.LookupEnv
	// MiniBatch folds GROUP BY changes per group between barriers and
	// watermarks (ops.AggregateConfig.MiniBatch).
	MiniBatch bool
	// RowErrors, when set, puts the operators' expressions under the
	// row-level error rule (NULL or a dropped row, counted there; see
	// guard); nil is the strict mode: a failing expression fails the query.
	RowErrors *expr.RowErrors
}

// Stage describes one engine stage for EXPLAIN and for the session's
// backend factory.
type Stage struct {
	Name        string
	Node        *Node
	Parallelism int
	Inputs      []string // "hash(key) <- agg#2"
	Stateful    bool
	OpID        state.OpID
}

// Physical is a query's engine graph and its stage descriptions.
type Physical struct {
	Graph  engine.Graph[ops.Change]
	Stages []Stage
	// Sources are the source stages' tables, in stage order.
	Sources []*connector.Table
}

// Stateful reports whether the named stage keeps keyed state.
func (p *Physical) Stateful(name string) bool {
	for _, s := range p.Stages {
		if s.Name == name {
			return s.Stateful
		}
	}
	return false
}

type builder struct {
	opts BuildOptions
	phys *Physical
	done map[*Node]int
}

// Build translates a planned query into an engine graph.
func Build(q *Query, opts BuildOptions) (*Physical, error) {
	if opts.Parallelism < 1 {
		return nil, fmt.Errorf("parallelism must be at least 1, got %d", opts.Parallelism)
	}
	if tick, span := procTick(q.Root, map[*Node]bool{}); tick > 0 {
		opts.Env.ProcTick, opts.Env.ProcSpan = time.Duration(tick)*time.Millisecond, time.Duration(span)*time.Millisecond
	}
	b := &builder{opts: opts, phys: &Physical{}, done: map[*Node]int{}}
	if _, err := b.node(q.Root); err != nil {
		return nil, err
	}
	return b.phys, nil
}

func (b *builder) add(n *Node, kind string, p int, spec engine.StageSpec[ops.Change], inputs []string) int {
	i := len(b.phys.Graph.Stages)
	spec.Name = fmt.Sprintf("%s#%d", kind, i)
	spec.Parallelism = p
	st := Stage{Name: spec.Name, Node: n, Parallelism: p, Inputs: inputs, Stateful: n.Op.Stateful()}
	if st.Stateful {
		spec.OpID = state.OpID(i + 1)
		st.OpID = spec.OpID
	}
	b.phys.Graph.Stages = append(b.phys.Graph.Stages, spec)
	b.phys.Stages = append(b.phys.Stages, st)
	b.done[n] = i
	return i
}

func (b *builder) par(stage int) int { return b.phys.Stages[stage].Parallelism }

func (b *builder) name(stage int) string { return b.phys.Stages[stage].Name }

func (b *builder) node(n *Node) (int, error) {
	if i, ok := b.done[n]; ok {
		return i, nil
	}
	ins := make([]int, len(n.Inputs))
	for k, in := range n.Inputs {
		i, err := b.node(in)
		if err != nil {
			return 0, err
		}
		ins[k] = i
	}
	i, err := b.stage(b.guard(n), ins)
	if err == nil {
		b.done[n] = i
	}
	return i, err
}

// stage places n's operator over its inputs' stages.
func (b *builder) stage(n *Node, ins []int) (int, error) {
	switch n.Op {
	case OpScan:
		return b.scan(n), nil
	case OpCalc, OpUnion, OpExpand:
		return b.calc(n, ins), nil
	case OpAggregate:
		cfg := ops.AggregateConfig{Name: "aggregate", GroupBy: n.GroupBy, Aggs: n.Aggs, HashSeed: b.opts.HashSeed,
			AppendOnly: n.Inputs[0].AppendOnly(), MiniBatch: b.opts.MiniBatch}
		if n.Grouping != nil {
			cfg.Globals = n.Grouping.Globals
		}
		return b.keyed(n, ins, "agg", []ops.KeyFn{{Exprs: n.GroupBy}}, func(int) engine.Operator[ops.Change] {
			return ops.NewAggregate(cfg)
		}), nil
	case OpDistinct:
		types := n.Schema.Types()
		return b.keyed(n, ins, "distinct", []ops.KeyFn{{}}, func(int) engine.Operator[ops.Change] {
			return ops.NewDistinct("distinct", b.opts.HashSeed, types)
		}), nil
	case OpWindow, OpWindowAgg, OpSessionAgg:
		return b.window(n, ins)
	case OpOver, OpOverGeneral, OpGroupTopN:
		return b.over(n, ins), nil
	case OpJoin:
		cfg := ops.JoinConfig{Name: "join", Kind: n.JoinKind, LeftKeys: n.LeftKeys, RightKeys: n.RightKeys, NullSafe: n.NullSafe,
			LeftWidth: len(n.Inputs[0].Schema.Cols), RightWidth: len(n.Inputs[1].Schema.Cols), Cond: n.Cond, HashSeed: b.opts.HashSeed}
		return b.keyed(n, ins, "join", cfg.KeyFns(), func(int) engine.Operator[ops.Change] {
			return ops.NewEquiJoin(cfg)
		}), nil
	case OpIntervalJoin:
		return b.intervalJoinStage(n, ins), nil
	case OpTemporalJoin:
		return b.temporalJoinStage(n, ins), nil
	case OpLookupJoin:
		return b.lookupStage(n, ins)
	case OpSetOp, OpSemiJoin:
		return b.setOrSemi(n, ins), nil
	case OpUpsert:
		return b.upsertStage(n, ins)
	case OpUnnest:
		return b.unnestStage(n, ins), nil
	}
	return 0, fmt.Errorf("plan: unknown operator %v", n.Op)
}

func (b *builder) scan(n *Node) int {
	t, env := n.Table, b.opts.Env
	b.phys.Sources = append(b.phys.Sources, t)
	par := connector.SourceParallelism(t)
	return b.add(n, "scan:"+t.Name, par, engine.StageSpec[ops.Change]{
		NewSource: func(sub, p int) (engine.Source[ops.Change], error) {
			if p != par {
				return nil, fmt.Errorf("source %s: parallelism must be %d, got %d", t.Name, par, p)
			}
			env := env
			env.Subtask, env.Parallelism = sub, p
			return connector.Open(t, env)
		},
	}, nil)
}

// calc places a stateless stage at its inputs' parallelism with Forward
// edges, so each upstream subtask's changes stay in order.
func (b *builder) calc(n *Node, ins []int) int {
	p := 1
	var edges []engine.Edge[ops.Change]
	var desc []string
	for _, i := range ins {
		p = max(p, b.par(i))
		edges = append(edges, engine.Edge[ops.Change]{From: i, Partitioning: engine.Forward})
		desc = append(desc, "forward <- "+b.name(i))
	}
	projs := n.Projs
	kind := "calc"
	if n.Op == OpUnion {
		kind = "union"
	}
	newOp := func(int) engine.Operator[ops.Change] { return &ops.Calc{Name: kind, Inputs: projs} }
	if n.Op == OpExpand {
		kind = "expand"
		newOp = func(int) engine.Operator[ops.Change] { return &ops.Expand{Name: kind, Projs: projs} }
	}
	return b.add(n, kind, p, engine.StageSpec[ops.Change]{
		NewOperator: newOp,
		Inputs:      edges,
	}, desc)
}

// keyed places a keyed stage at the job's parallelism behind Hash edges
// that hash the same key bytes the operator keys its state by.
func (b *builder) keyed(n *Node, ins []int, kind string, keys []ops.KeyFn, mk func(int) engine.Operator[ops.Change]) int {
	var edges []engine.Edge[ops.Change]
	var desc []string
	for k, i := range ins {
		edges = append(edges, engine.Edge[ops.Change]{From: i, Partitioning: engine.Hash, Key: ops.EdgeHash(keys[k], b.opts.HashSeed)})
		desc = append(desc, "hash <- "+b.name(i))
	}
	return b.add(n, kind, b.opts.Parallelism, engine.StageSpec[ops.Change]{NewOperator: mk, Inputs: edges}, desc)
}

// SortRows applies ORDER BY, OFFSET and LIMIT to a materialised result.
func (q *Query) SortRows(rows []types.Row) []types.Row {
	if len(q.Order) > 0 {
		sortRows(rows, q.Order)
	}
	if q.Offset > 0 {
		rows = rows[min(int(q.Offset), len(rows)):]
	}
	if q.Limit >= 0 && int(q.Limit) < len(rows) {
		rows = rows[:q.Limit]
	}
	return rows
}
