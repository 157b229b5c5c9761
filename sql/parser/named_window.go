package parser

import (
	"strings"

	"clink/sql/ast"
)

// windowWords start a window specification's clauses: any other
// identifier first in one names a WINDOW clause's window.
var windowWords = map[string]bool{"PARTITION": true, "ORDER": true, "ROWS": true, "RANGE": true, "GROUPS": true}

// namedWindows parses a WINDOW clause's `name AS (spec) [, ...]`.
func (p *parser) namedWindows() []ast.NamedWindow {
	var out []ast.NamedWindow
	for {
		name, t := p.ident("a window name")
		p.expectKw("AS")
		open := p.expectOp("(")
		out = append(out, ast.NamedWindow{At: t.pos, Name: name, Spec: p.windowSpec(open)})
		p.expectOp(")")
		if !p.acceptOp(",") {
			return out
		}
	}
}

// resolveWindows replaces, in place, each window spec of s that names a
// WINDOW clause's window (`OVER w`, `OVER (w ORDER BY ...)`) by the
// window it names, refined as the SQL standard allows (PostgreSQL's
// rules): the reference may add an ORDER BY if the named window has none
// and a frame if it has none, never a PARTITION BY. A window definition
// may build on an earlier one.
func (p *parser) resolveWindows(s *ast.Select) {
	defs := map[string]*ast.WindowSpec{}
	for _, w := range s.Windows {
		key := strings.ToLower(w.Name)
		if defs[key] != nil {
			p.errorAt(w.At, "window %q is defined twice", w.Name)
		}
		if w.Spec.Ref != "" {
			p.refine(w.Spec, defs)
		}
		defs[key] = w.Spec
	}
	for _, ref := range p.overRefs {
		p.refine(ref, defs)
	}
	p.overRefs = nil
}

// refine fills w from the window it names.
func (p *parser) refine(w *ast.WindowSpec, defs map[string]*ast.WindowSpec) {
	base := defs[strings.ToLower(w.Ref)]
	switch {
	case base == nil:
		p.errorAt(w.At, "window %q is not defined (name it in a WINDOW clause of the same SELECT)", w.Ref)
	case len(w.PartitionBy) > 0:
		p.errorAt(w.At, "OVER (%s PARTITION BY ...) cannot override window %q's PARTITION BY", w.Ref, w.Ref)
	case len(w.OrderBy) > 0 && len(base.OrderBy) > 0:
		p.errorAt(w.At, "OVER (%s ORDER BY ...) cannot override window %q's ORDER BY", w.Ref, w.Ref)
	case base.Frame != nil && (len(w.OrderBy) > 0 || w.Frame != nil):
		p.errorAt(w.At, "cannot refine window %q: it has a frame clause (use OVER %s)", w.Ref, w.Ref)
	}
	w.Ref = ""
	w.PartitionBy = base.PartitionBy
	if len(w.OrderBy) == 0 {
		w.OrderBy = base.OrderBy
	}
	if w.Frame == nil {
		w.Frame = base.Frame
	}
}
