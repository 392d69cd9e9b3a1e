//go:build unix

package umasktest

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
)

// childEnv carries the umask a child process is to run the checks under.
const childEnv = "AGENTCTL_TEST_UMASK"

// Under runs check once per umask in masks, each in a child process that
// set that umask before anything else. It must be called from a top-level
// test, whose name selects it in the child; in the child it runs check and
// nothing else.
func Under(t *testing.T, masks []int, check func(t *testing.T, umask int)) {
	t.Helper()
	if v := os.Getenv(childEnv); v != "" {
		mask, err := strconv.ParseInt(v, 8, 32)
		if err != nil {
			t.Fatalf("%s=%q is not an octal umask", childEnv, v)
		}
		syscall.Umask(int(mask))
		check(t, int(mask))
		return
	}
	name := t.Name()
	for _, mask := range masks {
		t.Run(fmt.Sprintf("umask%03o", mask), func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^"+name+"$", "-test.count=1", "-test.v")
			cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%o", childEnv, mask))
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("under umask %03o: %v\n%s", mask, err, out)
			}
		})
	}
}
