package childthread

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"testing"

	"github.com/agentctl/agentctl/internal/testenv/poll"
)

// ready and held run on the thread that started the child, and that
// thread outlives every other thread's end, even while held waits for
// something else: the child, told by its parent-death signal (SIGUSR1
// here) when that thread ends, lives on until it is killed.
func TestChildKeepsItsThread(t *testing.T) {
	cmd := exec.Command("sleep", "600")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGUSR1}
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
	ended := make([]int, 64)
	for i := range ended {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			ended[i] = syscall.Gettid()
		}()
	}
	wg.Wait()
	// A thread ends after its goroutine returns: the child's signal, if
	// it was one of them, has gone out once they are all gone. (Go never
	// ends the main thread, whose id is the process's.)
	poll.Until(t, "the locked goroutines' threads to end", func() bool {
		for _, tid := range ended {
			if tid == os.Getpid() {
				continue
			}
			if _, err := os.Stat(fmt.Sprintf("/proc/self/task/%d", tid)); err == nil {
				return false
			}
		}
		return true
	})
	cmd.Process.Kill()
	close(release)
	<-reaped
	if ws := cmd.ProcessState.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the child ended %v; want killed by the test, not by its thread's end", cmd.ProcessState)
	}
	if readyTid == 0 || readyTid != heldTid {
		t.Fatalf("ready ran on thread %d, held on %d; want the starting thread for both", readyTid, heldTid)
	}
}
