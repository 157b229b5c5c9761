package session

import (
	"fmt"
	"strings"

	"clink/engine"
	"clink/sql/ast"
	"clink/sql/connector"
	"clink/sql/ops"
	"clink/sql/plan"
	"clink/state"
	"clink/state/stateuri"
)

// explain renders the operator graph: per stage its operator, key,
// parallelism, inputs, state backend and path. The path is decided the
// way the runner decides it: a real runner is opened on a real backend
// from the state URI (subtask 0) and asked.
func explain(cfg Config, phys *plan.Physical, par int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "state %s, parallelism %d\n", stateuri.Redact(cfg.StateURI), par)
	rows := [][]string{{"stage", "operator", "key", "parallelism", "input", "state", "path"}}
	for _, st := range phys.Stages {
		key, backend, path := "-", "-", "source"
		switch {
		case st.Node.Op == plan.OpScan:
			path = "source"
			if st.Node.Table.Bounded {
				path += " (bounded)"
			}
		case st.Node.Op == plan.OpLookupJoin:
			key, backend, path = st.Node.Key, "none", lookupPath(cfg, phys, st)
		case st.Stateful:
			key, backend, path = st.Node.Key, stateuri.Redact(cfg.StateURI), runnerPath(cfg, phys, st)
		default:
			backend, path = "none", "sync (stateless)"
		}
		in := strings.Join(st.Inputs, ", ")
		if in == "" {
			in = "-"
		}
		rows = append(rows, []string{st.Name, st.Node.Op.String(), key, fmt.Sprint(st.Parallelism), in, backend, path})
	}
	b.WriteString(table(rows))
	for _, st := range phys.Stages {
		if st.Node.Detail != "" {
			fmt.Fprintf(&b, "  %s: %s\n", st.Name, st.Node.Detail)
		}
		if st.Node.Op == plan.OpScan && st.Node.Table != nil {
			for _, line := range connector.KafkaExplain(st.Node.Table) {
				fmt.Fprintf(&b, "  %s: %s\n", st.Name, line)
			}
		}
		if cfg.MiniBatch && st.Node.Op == plan.OpAggregate {
			fmt.Fprintf(&b, "  %s: mini-batch: each group's changes fold until the next barrier, watermark or end of input\n", st.Name)
		}
	}
	return b.String()
}

// runnerPath opens the stage's operator on a throwaway backend of the
// configured URI and reports the runner's choice.
func runnerPath(cfg Config, phys *plan.Physical, st plan.Stage) string {
	f, err := stateuri.Open(cfg.StateURI, stateuri.Options{HashSeed: cfg.HashSeed, Executor: cfg.Executor, Clock: cfg.Clock})
	if err != nil {
		return "error: " + err.Error()
	}
	defer f.Close()
	be, err := f.New(st.Name, 0, st.Parallelism)
	if err != nil {
		return "error: " + err.Error()
	}
	defer be.Close()
	var spec engine.StageSpec[ops.Change]
	for _, s := range phys.Graph.Stages {
		if s.Name == st.Name {
			spec = s
		}
	}
	op := spec.NewOperator(0)
	r, err := engine.NewRunner(op, engine.Output[ops.Change](discard{}), engine.RunnerConfig{
		Name: st.Name, OpID: st.OpID, Parallelism: st.Parallelism, Backend: be, ForceSync: cfg.ForceSync,
	})
	if err != nil {
		return "error: " + err.Error()
	}
	defer r.Close()
	if !r.Async() {
		return "sync" + syncReason(op, be, cfg.ForceSync)
	}
	path := "async"
	if c, ok := op.(engine.ReadCoalescer); ok && c.CoalesceReads() {
		path += ", coalesced"
	}
	if d, ok := op.(engine.DeadlineAware); ok && d.DeadlineAware() {
		path += ", deadline-ordered"
	}
	return path
}

// syncReason explains, for an operator that stays synchronous although
// the backend defers reads, why it does (null-aware NOT IN).
func syncReason(op any, be state.Backend, forced bool) string {
	ab, ok := be.(state.AsyncBackend)
	sr, has := op.(interface{ SyncReason() string })
	if forced || !ok || !ab.SupportsAsyncGet() || !has || sr.SyncReason() == "" {
		return ""
	}
	return " (" + sr.SyncReason() + ")"
}

type discard struct{}

func (discard) Emit(ops.Change)                {}
func (discard) EmitWatermark(int64)            {}
func (discard) EmitBarrier(state.CheckpointID) {}

// table renders rows as aligned columns (first row is the header).
func table(rows [][]string) string {
	w := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			w[i] = max(w[i], len(c))
		}
	}
	var b strings.Builder
	for _, r := range rows {
		for i, c := range r {
			if i == len(r)-1 {
				b.WriteString(c)
			} else {
				fmt.Fprintf(&b, "%-*s  ", w[i], c)
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func (s *Session) explain(st *ast.Explain) (*Result, error) {
	var q *ast.Query
	switch x := st.Stmt.(type) {
	case *ast.QueryStmt:
		q = x.Query
	case *ast.CreateView:
		q = x.Query
	case *ast.Insert:
		q = x.Query
	}
	if q == nil {
		return nil, ast.Errorf(st.At, "EXPLAIN shows a query's plan (SELECT, CREATE VIEW or INSERT ... SELECT)")
	}
	pq, err := s.cat.Plan(q)
	if err != nil {
		return nil, err
	}
	phys, err := plan.Build(pq, plan.BuildOptions{Parallelism: s.cfg.Parallelism, HashSeed: s.cfg.HashSeed})
	if err != nil {
		return nil, err
	}
	return &Result{Message: strings.TrimRight(explain(s.cfg, phys, s.cfg.Parallelism), "\n")}, nil
}
