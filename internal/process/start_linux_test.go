package process

import (
	"os"
	"os/exec"
	"testing"
)

func TestStartTimeTellsReusedPids(t *testing.T) {
	self, err := StartTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := StartTime(os.Getpid()); again != self || self == 0 {
		t.Fatalf("start time of this process: %d, then %d", self, again)
	}
	cmd := exec.Command("sleep", "5")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	child, err := StartTime(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if child < self {
		t.Errorf("a child started after this process has an earlier start time: %d < %d", child, self)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if _, err := StartTime(cmd.Process.Pid); err == nil {
		t.Errorf("a reaped process still has a start time")
	}
}
