package session

import (
	"fmt"
	"strings"
	"time"

	"clink/engine/event"
	"clink/sql/expr"
	"clink/sql/plan"
)

// ExpressionErrorsOption is the setting that chooses what a row-level
// expression error does: 'null' (the default, RisingWave's rule: NULL
// for the row, or the row dropped where a key fails, counted and
// reported) or 'fail' (Flink's: the query fails).
const ExpressionErrorsOption = "expression.errors"

// parseExpressionErrors reads the setting's value: strict for 'fail'.
func parseExpressionErrors(v string) (strict bool, err error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "null":
		return false, nil
	case "fail":
		return true, nil
	}
	return false, fmt.Errorf("%s: want 'null' or 'fail', got %q", ExpressionErrorsOption, v)
}

// expressionErrorsValue is the setting's current value for SHOW.
func (s *Session) expressionErrorsValue() string {
	if s.cfg.StrictExpressions {
		return "fail"
	}
	return "null"
}

// newRowErrors returns the record of a query's row-level expression
// errors, nil in strict mode. The first error is also a runtime Warning
// event, so the dashboard and traces show it.
func (s *Session) newRowErrors() *expr.RowErrors {
	if s.cfg.StrictExpressions {
		return nil
	}
	r := &expr.RowErrors{}
	if bus := s.cfg.Bus; bus != nil {
		clock := s.cfg.Clock
		r.OnFirst = func(e expr.RowError) {
			if !bus.Wants(event.Warning) {
				return
			}
			at := time.Now()
			if clock != nil {
				at = clock.Now()
			}
			bus.Emit(event.Event{Kind: event.Warning, Time: at, Text: "expression error: " + e.String() +
				" (the row is NULL there; later ones are counted: SET 'expression.errors' = 'fail' fails the query instead)"})
		}
	}
	return r
}

// ExprErrors reports the query's row-level expression errors so far: how
// many evaluations failed (each gave NULL or dropped its row) and the
// first one with its position and operator. Always zero in strict mode,
// where the first one fails the query. A restore keeps counting, so rows
// replayed after the checkpoint count again.
func (h *Handle) ExprErrors() expr.RowErrorReport { return h.rowErrs.Report() }

// buildOptions are the physical plan's options for this query.
func (h *Handle) buildOptions() plan.BuildOptions {
	cfg := h.cfg
	return plan.BuildOptions{Parallelism: h.par, HashSeed: cfg.HashSeed, Env: h.env(), Lookup: h.lookupEnv(),
		MiniBatch: cfg.MiniBatch, RowErrors: h.rowErrs}
}
