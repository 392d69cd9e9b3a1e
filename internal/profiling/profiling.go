// Package profiling writes a long-running command's CPU and heap profiles
// into a folder when AGENTCTL_PROFILE_DIR names one, so that a benchmark
// whose figure is over its budget leaves the profile that shows why
// (scripts/bench sets it). Read them with `go tool pprof`.
//
// It owns only the files it creates in that folder; without the variable
// it does nothing, and the CPU profiler's signals never run.
package profiling

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
)

// EnvDir names the folder profiles are written to.
const EnvDir = "AGENTCTL_PROFILE_DIR"

// FromEnv starts profiling this process, named name, into the folder
// AGENTCTL_PROFILE_DIR names; without it, stop does nothing.
func FromEnv(name string) (stop func() error, err error) {
	dir := os.Getenv(EnvDir)
	if dir == "" {
		return func() error { return nil }, nil
	}
	return Start(dir, name)
}

// Start begins a CPU profile of this process into dir/NAME-PID.cpu.pprof.
// stop ends it and writes the heap in use then to dir/NAME-PID.heap.pprof.
func Start(dir, name string) (stop func() error, err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("cannot create the profile folder: %w", err)
	}
	base := filepath.Join(dir, fmt.Sprintf("%s-%d", name, os.Getpid()))
	cpu, err := os.OpenFile(base+".cpu.pprof", os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("cannot create the CPU profile: %w", err)
	}
	if err := pprof.StartCPUProfile(cpu); err != nil {
		cpu.Close()
		return nil, fmt.Errorf("cannot start the CPU profile: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		err := cpu.Close()
		heap, herr := os.OpenFile(base+".heap.pprof", os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if herr != nil {
			return errors.Join(err, fmt.Errorf("cannot create the heap profile: %w", herr))
		}
		runtime.GC() // the heap in use now, not as of the last collection
		herr = pprof.WriteHeapProfile(heap)
		return errors.Join(err, herr, heap.Close())
	}, nil
}
