//go:build linux

package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// A second hub on the same runtime refuses to start, naming the first's
// pid; once the first is gone (killed: its lock dies with it), a new one
// starts on the same store.
func TestSecondHubOnTheSameRuntimeIsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	root := filepath.Join(dir, "hub")
	machine(t, root, "hub: {machine: hubm, listen: "+freeAddr(t)+"}\nagents:\n  - {name: Agent-5, machine: desk-2}\n")
	first := startHub(t, dir, "first", root)
	_, stderr, err := agentctl(t, root, "hub", "--listen", freeAddr(t))
	if err == nil {
		t.Fatal("a second hub started on the same runtime")
	}
	if want := fmt.Sprintf("another agentctl hub is running on this runtime (pid %d)", first.cmd.Process.Pid); !strings.Contains(stderr, want) || !strings.Contains(stderr, "hint:") {
		t.Errorf("the second hub said:\n%s\nwant %q and a hint", stderr, want)
	}
	first.kill()
	startHub(t, dir, "again", root)
}

// A seat with no credentials is told at once how to get them, and one
// with another machine's credentials is refused by the hub.
func TestSeatWithoutCredentialsIsToldHowToGetThem(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	root, desk2 := filepath.Join(dir, "hub"), filepath.Join(dir, "desk-2")
	cfg := "hub: {machine: hubm, listen: " + freeAddr(t) + "}\nagents:\n  - {name: Agent-5, machine: desk-2, driver: exec, exec: {command: [cat]}}\n  - {name: Agent-7, machine: desk-3, driver: exec, exec: {command: [cat]}}\n"
	machine(t, root, cfg)
	machine(t, desk2, cfg)
	url := startHub(t, dir, "hub", root).url()
	_, stderr, err := agentctl(t, desk2, "run", "Agent-5", "--hub", url)
	if err == nil || !strings.Contains(stderr, "no credentials for the hub") || !strings.Contains(stderr, "hint: on the hub's machine run 'agentctl hub credentials desk-2") {
		t.Errorf("a seat without credentials: %v\n%s", err, stderr)
	}
	// A seed this user made for nothing: the hub does not know it.
	machine(t, filepath.Join(dir, "other-hub"), cfg)
	giveCredentials(t, filepath.Join(dir, "other-hub"), desk2, "desk-2")
	_, stderr, err = agentctl(t, desk2, "run", "Agent-5", "--hub", url)
	if err == nil || !strings.Contains(stderr, "refused the nkey seed") {
		t.Errorf("a seat with a seed the hub never made: %v\n%s", err, stderr)
	}
}
