package session

import (
	"fmt"

	"clink/sql/plan"
	"clink/state/mempool"
)

// Faults returns the fault-injection surface of the query's state pool
// (memory:// and disagg-local:// have one), for scenario files and tests.
func (h *Handle) Faults() (mempool.Faults, bool) { return h.factory.Faults() }

// Subtasks names the current job's operator subtasks ("stage/subtask"), in
// the order of Job().Runners() and Job().Backends().
func (h *Handle) Subtasks() []string {
	var out []string
	for _, st := range h.phys.Stages {
		if st.Node.Op == plan.OpScan {
			continue
		}
		for i := range st.Parallelism {
			out = append(out, fmt.Sprintf("%s/%d", st.Name, i))
		}
	}
	return out
}
