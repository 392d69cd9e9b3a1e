package profiling

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"testing"
)

func TestStartWritesBothProfiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "profiles")
	stop, err := Start(dir, "run")
	if err != nil {
		t.Fatal(err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"cpu", "heap"} {
		data, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("run-%d.%s.pprof", os.Getpid(), kind)))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
			t.Errorf("the %s profile is not a gzipped profile: % x", kind, data[:min(8, len(data))])
		}
	}
}

func TestFromEnvWithoutTheVariableDoesNothing(t *testing.T) {
	t.Setenv(EnvDir, "")
	stop, err := FromEnv("run")
	if err != nil {
		t.Fatal(err)
	}
	// The profiler is free: FromEnv started nothing.
	if err := pprof.StartCPUProfile(io.Discard); err != nil {
		t.Fatalf("a CPU profile runs without %s: %v", EnvDir, err)
	}
	pprof.StopCPUProfile()
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}
