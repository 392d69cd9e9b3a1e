package childthread

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"testing"
)

// ready and held run on the thread that started the child, and that
// thread outlives every other thread's end, even while held waits for
// something else: the child, dying with that thread, lives on.
func TestChildKeepsItsThread(t *testing.T) {
	cmd := exec.Command("sleep", "600")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var readyTid, heldTid int
	parked, release := make(chan struct{}), make(chan struct{})
	reaped := make(chan error, 1)
	err := Start(cmd, func() error {
		readyTid = syscall.Gettid()
		return nil
	}, func() {
		close(parked)
		<-release // a thread left to the pool would serve others now
		heldTid = syscall.Gettid()
		reaped <- cmd.Wait()
	})
	if err != nil {
		t.Fatal(err)
	}
	<-parked
	// Goroutines that return locked end their threads, and Go hands them
	// idle ones first.
	var wg sync.WaitGroup
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
		}()
	}
	wg.Wait()
	close(release)
	if err := syscall.Kill(cmd.Process.Pid, 0); err != nil {
		t.Fatalf("the child is gone: %v", err)
	}
	cmd.Process.Kill()
	<-reaped
	if readyTid == 0 || readyTid != heldTid {
		t.Fatalf("ready ran on thread %d, held on %d; want the starting thread for both", readyTid, heldTid)
	}
}
