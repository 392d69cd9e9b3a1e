//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestHubOnDebiansNATSServer runs the swarm on a NATS server agentctl did
// not build: Debian's nats-server, an older release configured by its own
// file, that asks for a user and password. The hub and the seats log in
// with the password file; the server is killed mid-turn and started again
// on its store; every job is done once, each command run once.
func TestHubOnDebiansNATSServer(t *testing.T) {
	t.Parallel()
	bin, err := exec.LookPath("nats-server")
	if err != nil {
		if os.Getenv("AGENTCTL_REQUIRE_NATS_SERVER") != "" {
			t.Fatal("nats-server is not installed, and AGENTCTL_REQUIRE_NATS_SERVER is set; run scripts/setup")
		}
		t.Skip("nats-server is not installed; scripts/setup installs it")
	}
	addr := freeAddr(t)
	serverDir := t.TempDir()
	conf := filepath.Join(serverDir, "nats.conf")
	writeFile(t, conf, fmt.Sprintf("listen: %q\njetstream { store_dir: %q }\nauthorization { user: swarm, password: \"s3cret-of-the-swarm\" }\n",
		addr, filepath.Join(serverDir, "store")), 0o600)
	server := startNATSServer(t, bin, conf, serverDir)
	url := "nats://" + addr

	s := newFaultSwarm(t, "hub: {machine: hubm, nats: "+url+", user: swarm, password_file: pw}\n", "never")
	for _, root := range []string{s.hub, s.m1, s.m2} {
		writeFile(t, filepath.Join(root, "pw"), "s3cret-of-the-swarm\n", 0o600)
	}
	startHub(t, s.dir, "hub", s.hub)
	for agent, root := range map[string]string{"Agent-1": s.m1, "Agent-2": s.m2} {
		startAgentctl(t, s.dir, "seat-"+agent, root, "run", agent, "--hub", url, "--log-format", "json")
	}
	s.send()
	s.strikeMidTurn("Agent-1", func(string) {
		server.kill()
		server = startNATSServer(t, bin, conf, serverDir)
	})
	s.settled()
	s.check(func(string, string) bool { return false }, nil)
}

// startNATSServer starts the nats-server binary with conf, and returns once
// it accepts connections.
func startNATSServer(t *testing.T, bin, conf, dir string) *proc {
	t.Helper()
	p := &proc{t: t, name: "nats-server", out: filepath.Join(dir, "nats-server.out"), log: filepath.Join(dir, "nats-server.log")}
	p.cmd = exec.Command(bin, "-c", conf)
	startProc(t, p)
	p.awaitLog("Server is ready")
	return p
}

func writeFile(t *testing.T, path, data string, perm os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), perm); err != nil {
		t.Fatal(err)
	}
}
