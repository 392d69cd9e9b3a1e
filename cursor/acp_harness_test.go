package cursor

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// The stand-in ACP agent (fixtures/acpagent), built once per test binary.
var acpAgent struct {
	once sync.Once
	path string
	err  error
}

func acpAgentBin(t testing.TB) string {
	t.Helper()
	acpAgent.once.Do(func() {
		dir, err := os.MkdirTemp("", "acpagent")
		if err != nil {
			acpAgent.err = err
			return
		}
		prev := afterTests
		afterTests = func() { prev(); os.RemoveAll(dir) }
		bin := filepath.Join(dir, "acpagent")
		if runtime.GOOS == "windows" {
			bin += ".exe"
		}
		out, err := exec.Command("go", "build", "-o", bin, "../fixtures/acpagent").CombinedOutput()
		if err != nil {
			acpAgent.err = &buildError{out: string(out), err: err}
			return
		}
		acpAgent.path = bin
	})
	if acpAgent.err != nil {
		t.Fatalf("cannot build the stand-in ACP agent: %v", acpAgent.err)
	}
	return acpAgent.path
}

type buildError struct {
	out string
	err error
}

func (e *buildError) Error() string { return e.err.Error() + ": " + e.out }

// acpStandIn is a seat running the stand-in in a fresh folder, with a
// fresh store for its sessions.
func acpStandIn(t testing.TB) ACPSettings {
	t.Helper()
	return ACPSettings{Command: []string{acpAgentBin(t)}, Dir: t.TempDir(), Env: []string{"ACPAGENT_STATE=" + t.TempDir()}}
}

// newACP builds the driver and ends its agent when the test ends.
func newACP(t testing.TB, s ACPSettings) *ACP {
	t.Helper()
	d, err := NewACP(s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	return d
}
