package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
)

// profileFlags are the --cpuprofile and --memprofile flags that `clink
// run` and `clink bench` share: users of a streaming engine profile the
// job they run, not a benchmark of it.
type profileFlags struct {
	cpu, mem string
}

// add registers the two flags on fs.
func (p *profileFlags) add(fs *flag.FlagSet) {
	fs.StringVar(&p.cpu, "cpuprofile", "", "write a CPU profile of the whole command to FILE (go tool pprof FILE)")
	fs.StringVar(&p.mem, "memprofile", "", "write a heap profile of the peak live heap to FILE when the command ends (go tool pprof FILE)")
}

// start begins the CPU profile (when asked) and returns the function that
// stops it and writes the heap profile; call it once, when the command's
// work is done. A file that cannot be created is an error before any work
// starts, so a bad path never costs a long run.
func (p profileFlags) start() (stop func() error, err error) {
	var cpu *os.File
	if p.cpu != "" {
		if cpu, err = os.Create(p.cpu); err != nil {
			return nil, fmt.Errorf("--cpuprofile: %w", err)
		}
		if err := pprof.StartCPUProfile(cpu); err != nil {
			cpu.Close()
			return nil, fmt.Errorf("--cpuprofile: %w", err)
		}
	}
	var mem *os.File
	if p.mem != "" {
		if mem, err = os.Create(p.mem); err != nil {
			if cpu != nil {
				pprof.StopCPUProfile()
				cpu.Close()
			}
			return nil, fmt.Errorf("--memprofile: %w", err)
		}
	}
	var peak *heapPeak
	if mem != nil {
		peak = watchHeapPeak()
	}
	return func() error {
		var errs []error
		if cpu != nil {
			pprof.StopCPUProfile()
			if err := cpu.Close(); err != nil {
				errs = append(errs, fmt.Errorf("--cpuprofile: %w", err))
			}
		}
		if mem != nil {
			if _, err := mem.Write(peak.stop()); err != nil {
				errs = append(errs, fmt.Errorf("--memprofile: %w", err))
			}
			if err := mem.Close(); err != nil {
				errs = append(errs, fmt.Errorf("--memprofile: %w", err))
			}
		}
		return errors.Join(errs...)
	}, nil
}
