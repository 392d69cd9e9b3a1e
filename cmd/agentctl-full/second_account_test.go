//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/agentctl/agentctl/internal/layout"
)

// Another local account of the hub's machine gets nothing: the hub refuses
// it (no credentials, and it cannot read the hub's), mission control
// refuses its page, API and event stream, and it can read neither the
// credentials nor the token. CI runs as root, which can make that account;
// elsewhere the test says why it does not run.
func TestSecondLocalAccountGetsNothing(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("AGENTCTL_REQUIRE_SECOND_ACCOUNT") != "" {
			t.Fatal("AGENTCTL_REQUIRE_SECOND_ACCOUNT is set, but only root can make a second account for this test")
		}
		t.Skip("making a second local account needs root (CI runs as root); set AGENTCTL_REQUIRE_SECOND_ACCOUNT to make this a failure")
	}
	uid, gid := secondAccount(t)

	// A runtime as people keep it: in folders others may enter.
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	root := filepath.Join(dir, "hub")
	machine(t, root, "hub: {machine: hubm, listen: "+freeAddr(t)+"}\nagents:\n  - {name: Agent-1}\n  - {name: Agent-2, machine: desk-2}\npeople: [human]\n")
	mustAgentctl(t, root, "init")
	hubURL := startHub(t, dir, "hub", root).url()
	serve := startAgentctl(t, dir, "serve", root, "serve", "--addr", "127.0.0.1:0")
	serveURL := regexp.MustCompile(`http://[^/\s]+`).FindString(serve.url())

	bin := filepath.Join(dir, "bin", probeCommand)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	copyExecutable(t, self, bin)
	files := []string{layout.HubOwnSeed(root), layout.HubMachineSeed(root, "desk-2"), layout.Token(root)}
	cmd := exec.Command(bin)
	cmd.Args[0] = probeCommand
	cmd.Env = append(os.Environ(), "PROBE_HUB="+hubURL, "PROBE_SERVE="+serveURL, "PROBE_FILES="+strings.Join(files, "\n"), "HOME=/")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid}, Pdeathsig: syscall.SIGKILL}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the probe as uid %d: %v\n%s", uid, err, out)
	}
	report := string(out)
	t.Logf("as uid %d:\n%s", uid, report)
	if strings.Contains(report, "GOT ") {
		t.Errorf("the second account got what it must not:\n%s", report)
	}
	for _, want := range append([]string{"hub anonymous: refused", "hub with the hub's seed: refused", "GET /: refused 401",
		"GET /api/snapshot: refused 401", "GET /api/events: refused 401", "GET /api/messages?mailbox=human&state=pending: refused 401"}, func() (w []string) {
		for _, f := range files {
			w = append(w, "read "+f+": refused")
		}
		return
	}()...) {
		if !strings.Contains(report, want) {
			t.Errorf("the probe's report lacks %q", want)
		}
	}
}

// secondAccount makes a system account for the test and removes it at the
// end.
func secondAccount(t *testing.T) (uid, gid uint32) {
	t.Helper()
	name := fmt.Sprintf("agentctl-t%d", os.Getpid())
	if out, err := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name).CombinedOutput(); err != nil {
		t.Fatalf("useradd %s: %v\n%s", name, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("userdel", name).CombinedOutput(); err != nil {
			t.Errorf("userdel %s: %v\n%s", name, err, out)
		}
	})
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := strconv.Atoi(u.Uid)
	g, _ := strconv.Atoi(u.Gid)
	return uint32(id), uint32(g)
}

func copyExecutable(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o755); err != nil {
		t.Fatal(err)
	}
}
