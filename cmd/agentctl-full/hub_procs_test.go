//go:build linux

package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/agentctl/agentctl/internal/testenv/freeport"
	"github.com/agentctl/agentctl/internal/testenv/poll"
	"github.com/agentctl/agentctl/mailbox"
)

// The helpers of the hub's process-level tests: every "machine" is a
// runtime folder of its own, every part a real agentctl process.

// freeAddr finds a loopback port nobody listens on, so that a hub killed
// and started again comes back on the same URL.
func freeAddr(t *testing.T) string {
	t.Helper()
	return freeport.Addr(t)
}

// machine makes a runtime folder with the given agentctl.yaml.
func machine(t *testing.T, root, config string) {
	t.Helper()
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "agentctl.yaml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
}

// proc is an agentctl process of a test, its stdout and stderr in files
// of the test's folder.
type proc struct {
	t    *testing.T
	name string
	cmd  *exec.Cmd
	out  string // stdout's file
	log  string // stderr's file
	// exited is closed once the process has ended and been reaped, with
	// waitErr its end.
	exited  chan struct{}
	waitErr error
}

// startAgentctl starts agentctl with args on root; name names its output
// files (name.out, name.log, appended to by every start of that name).
// The process dies with the test (Pdeathsig) and is killed at its end.
func startAgentctl(t *testing.T, dir, name, root string, args ...string) *proc {
	t.Helper()
	p := &proc{t: t, name: name, out: filepath.Join(dir, name+".out"), log: filepath.Join(dir, name+".log")}
	p.cmd = exec.Command("agentctl", append([]string{"--root", root}, args...)...)
	startProc(t, p)
	return p
}

// startProc starts p.cmd with its stdout in p.out and its stderr appended
// to p.log.
func startProc(t *testing.T, p *proc) {
	t.Helper()
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := os.OpenFile(p.out, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	errf, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer errf.Close()
	fmt.Fprintf(errf, "--- %s\n", strings.Join(p.cmd.Args, " "))
	p.cmd.Stdout, p.cmd.Stderr = out, errf
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p.exited = make(chan struct{})
	go func() {
		p.waitErr = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("%s's log:\n%s", p.name, readFile(t, p.log))
		}
	})
}

// kill ends the process at once, as a crash or a pulled plug would.
func (p *proc) kill() {
	if !p.ended() {
		_ = p.cmd.Process.Kill()
	}
	<-p.exited
}

// wait waits for the process to end and returns how it ended.
func (p *proc) wait() error {
	<-p.exited
	return p.waitErr
}

// ended reports whether the process has ended.
func (p *proc) ended() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// url waits for the first line a hub or server prints on stdout: its
// client URL, printed once it is ready.
func (p *proc) url() string {
	p.t.Helper()
	var line string
	p.await("print its URL", func() bool {
		f, err := os.Open(p.out)
		if err != nil {
			return false
		}
		defer f.Close()
		line, err = bufio.NewReader(f).ReadString('\n')
		return err == nil
	})
	return strings.TrimSpace(line)
}

// awaitLog waits until the process's log says what.
func (p *proc) awaitLog(what string) {
	p.t.Helper()
	p.await("log "+what, func() bool { return strings.Contains(readFile(p.t, p.log), what) })
}

// await waits until done, failing the test at once if the process ends
// first: nothing it has not done by then will come.
func (p *proc) await(what string, done func() bool) {
	p.t.Helper()
	poll.Until(p.t, p.name+" to "+what, func() bool { return done() || p.ended() })
	if !done() {
		p.t.Fatalf("%s ended (%v) before it could %s; its log:\n%s", p.name, p.waitErr, what, readFile(p.t, p.log))
	}
}

// startHub starts 'agentctl hub' with args and returns it once it is ready.
func startHub(t *testing.T, dir, name, root string, args ...string) *proc {
	t.Helper()
	p := startAgentctl(t, dir, name, root, append([]string{"hub", "--log-format", "json"}, args...)...)
	p.url()
	return p
}

// giveCredentials copies machine's seed from the hub's runtime to the
// machine's, where its seats look by default, as a person would with
// 'agentctl hub credentials'.
func giveCredentials(t *testing.T, hubRoot, machineRoot, machine string) {
	t.Helper()
	dir := filepath.Join(machineRoot, "hub", "credentials")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	mustAgentctl(t, hubRoot, "hub", "credentials", machine, "--out", filepath.Join(dir, machine+".nk"))
}

// swarmLogin sets the swarm-wide login in each root: the password file the
// hub section "user: swarm, password_file: pw" names.
func swarmLogin(t *testing.T, roots ...string) {
	t.Helper()
	for _, root := range roots {
		if err := os.MkdirAll(root, 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(root, "pw"), "s3cret-of-the-swarm\n", 0o600)
	}
}

// mailboxes lists, per state, the ids of the messages in agent's mailbox
// under root.
func mailboxes(t *testing.T, root, agent string) map[string][]string {
	t.Helper()
	mb, err := mailbox.Open(root, agent)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string][]string{}
	for _, state := range mailbox.States {
		entries, err := mb.List(state)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			ids[state] = append(ids[state], e.Message.ID)
		}
	}
	return ids
}

// archivedWithReceipts counts the messages of agent's archive that have a
// receipt.
func archivedWithReceipts(t *testing.T, root, agent string) int {
	t.Helper()
	receipts, err := filepath.Glob(filepath.Join(mailbox.Dir(root, agent), "archive", "*", "*.receipt.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return len(receipts)
}
