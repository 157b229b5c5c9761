package server

import (
	"fmt"
	"sort"
	"strings"

	"clink/sql/ast"
	"clink/sql/parser"
	"clink/sql/plan"
)

// Views over views. A materialised view b whose query names materialised
// view a runs a's query inside its own job: b's query gets a's (and, in
// order, the views a reads) as common table expressions named like them,
// which shadow a's read table, so b follows a's inputs' changelog
// continuously and checkpoints it with its own state; a restart replays
// the catalog in order and expands b the same way. The cost is that a's
// work is done twice. DROP of a while b depends on it is refused, as
// PostgreSQL does without CASCADE.

// expandMVLocked returns the text b's job runs and the materialised views
// b's query reads (lower-case names): the query as typed when it reads
// none, else with the views' CTEs in front; c.mu is held.
func (c *core) expandMVLocked(cv *ast.CreateView) (text string, deps []string, ctes []ast.CTE, err error) {
	pq, err := c.sess.Catalog().Plan(cv.Query) // positioned errors of the statement as typed
	if err != nil {
		return "", nil, nil, err
	}
	seen := map[string]bool{}
	scans(pq.Root, func(n *plan.Node) {
		key := strings.ToLower(n.Table.Name)
		if _, ok := c.mvs[key]; ok && !seen[key] {
			seen[key] = true
			deps = append(deps, key)
		}
	})
	sort.Strings(deps)
	have := map[string]bool{}
	for _, d := range deps {
		dep := c.mvs[d]
		if dep.ctes == nil {
			return "", nil, nil, ast.Errorf(cv.Query.At, "materialized view %s is not running (%v): it cannot feed %s", dep.name, dep.err, cv.Name)
		}
		for _, cte := range dep.ctes {
			if k := strings.ToLower(cte.Name); !have[k] {
				have[k] = true
				ctes = append(ctes, cte)
			}
		}
	}
	own := ast.CTE{At: cv.At, Name: cv.Name, Columns: cv.Columns, Query: cv.Query}
	if len(deps) == 0 {
		return cv.Text, nil, []ast.CTE{own}, nil
	}
	q := *cv.Query
	for _, cte := range q.With {
		delete(have, strings.ToLower(cte.Name)) // the query's own CTE of that name wins
	}
	var front []ast.CTE
	for _, cte := range ctes {
		if have[strings.ToLower(cte.Name)] {
			front = append(front, cte)
		}
	}
	q.With = append(front, q.With...)
	text = ast.String(&q)
	// Re-parse the rendering, so the job runs exactly what a restart runs.
	if _, err := parser.Parse(text); err != nil {
		return "", nil, nil, fmt.Errorf("materialized view %s over %s: %w", cv.Name, strings.Join(deps, ", "), err)
	}
	return text, deps, append(front, own), nil
}

// dependentsLocked names the materialised views that read view name
// directly; c.mu is held.
func (c *core) dependentsLocked(name string) []string {
	key := strings.ToLower(name)
	var out []string
	for _, j := range c.mvs {
		for _, d := range j.deps {
			if d == key {
				out = append(out, j.name)
			}
		}
	}
	sort.Strings(out)
	return out
}

// dependError refuses a DROP of a view others read (SQLSTATE 2BP01,
// dependent_objects_still_exist), with PostgreSQL's detail and a hint.
type dependError struct {
	pos    *ast.Error // the message at the DROP's position
	name   string
	others []string
}

func newDependError(at ast.Pos, name string, others []string) *dependError {
	return &dependError{pos: ast.Errorf(at, "cannot drop materialized view %s because other objects depend on it", name),
		name: name, others: others}
}

func (e *dependError) Error() string { return e.pos.Error() }

// Unwrap gives the positioned error (for the caret).
func (e *dependError) Unwrap() error { return e.pos }

func (e *dependError) detail() string {
	lines := make([]string, len(e.others))
	for i, o := range e.others {
		lines[i] = fmt.Sprintf("materialized view %s depends on materialized view %s", o, e.name)
	}
	return strings.Join(lines, "\n")
}

func (e *dependError) hint() string {
	return fmt.Sprintf("DROP MATERIALIZED VIEW %s first (clink has no CASCADE).", strings.Join(e.others, ", "))
}
