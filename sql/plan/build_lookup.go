package plan

import (
	"fmt"

	"clink/engine"
	enginelookup "clink/engine/lookup"
	"clink/engine/resilience"
	"clink/sql/connector"
	"clink/sql/ops"
	"clink/sql/types"
)

// lookupStage places a lookup join at the job's parallelism behind a Hash
// edge on the lookup key (a key's changes stay on one subtask, in order).
// Its subtasks share one HTTP client, opened at the first lookup with
// max_concurrency x parallelism connections and closed with the query,
// and one circuit breaker.
func (b *builder) lookupStage(n *Node, ins []int) (int, error) {
	t := n.Table
	spec, err := connector.ParseHTTP(t)
	if err != nil {
		return 0, err
	}
	env := b.opts.Lookup
	open := env.Open
	if open == nil {
		open = ops.DefaultHTTPOpener
	}
	client := ops.NewLookupClient(open, ops.HTTPClientOptions{
		Table: t.Name, MaxConnections: spec.MaxConcurrency * b.opts.Parallelism, Timeout: spec.Timeout, Clock: env.Clock,
	})
	if env.OnClose != nil {
		env.OnClose(client.Close)
	}
	cfg := ops.LookupJoinConfig{
		Name: "lookup " + t.Name, Kind: n.JoinKind, Keys: n.LeftKeys, KeyCols: spec.KeyCols,
		URL:    spec.BuildURL,
		Decode: func(body []byte) (types.Row, error) { return connector.DecodeJSON(t, body) },
		Width:  len(t.Columns), Cond: n.Cond, Ordered: spec.Ordered, MaxConcurrency: spec.MaxConcurrency,
		Timeout: spec.Timeout, OnFailure: failurePolicy(spec.OnFailure),
		Gate: !spec.Ordered && !n.Inputs[0].AppendOnly(), HashSeed: b.opts.HashSeed, Client: client, Idle: env.Idle,
	}
	if spec.Adaptive != "" {
		cfg.Adapt = &enginelookup.AdaptConfig{Signal: enginelookup.Latency, Setpoint: spec.AdaptiveSetpoint,
			Min: spec.AdaptiveMin, Max: spec.MaxConcurrency}
		if spec.Adaptive == "ready_fill" {
			cfg.Adapt.Signal = enginelookup.ReadyFill
		}
	}
	if spec.RetryMaxAttempts > 1 {
		cfg.Retry = &resilience.RetryPolicy{MaxAttempts: spec.RetryMaxAttempts, InitialBackoff: spec.RetryBackoff,
			Multiplier: spec.RetryMultiplier, MaxBackoff: spec.RetryMaxWait, ShouldRetry: ops.Retryable}
	}
	if spec.BreakerThreshold > 0 {
		cfg.Breaker, err = resilience.NewCircuitBreaker(resilience.BreakerConfig{Name: "lookup " + t.Name,
			FailureThreshold: spec.BreakerThreshold, Cooldown: spec.BreakerCooldown, Clock: env.Clock})
		if err != nil {
			return 0, fmt.Errorf("table %s: %w", t.Name, err)
		}
	}
	in := ins[0]
	edge := engine.Edge[ops.Change]{From: in, Partitioning: engine.Hash, Key: ops.EdgeHash(ops.KeyFn{Exprs: n.LeftKeys}, b.opts.HashSeed)}
	return b.add(n, "lookup:"+t.Name, b.opts.Parallelism, engine.StageSpec[ops.Change]{
		NewOperator: func(int) engine.Operator[ops.Change] { return ops.NewLookupJoin(cfg) },
		Inputs:      []engine.Edge[ops.Change]{edge},
	}, []string{"hash <- " + b.name(in)}), nil
}

func failurePolicy(s string) enginelookup.FailurePolicy {
	switch s {
	case "null":
		return enginelookup.EmitDefault
	case "drop":
		return enginelookup.Drop
	}
	return enginelookup.FailJob
}
