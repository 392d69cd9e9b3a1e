package intake

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// A shared glob over the old per-agent folders ("agent_workspaces/*/inbox")
// reads the files of every folder it matches, routes a message that names
// no recipient by the agent folder it sits in, and finds on its next scan
// a folder made after the runners started, as an old writer makes one for
// a new agent; the folders are only read.
func TestSharedGlobFollowsAgentFolders(t *testing.T) {
	put := func(path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, path, []byte(text))
	}
	root := newRuntime(t, "Agent-1", "Agent-2", "Agent-3")
	ws := filepath.Join(t.TempDir(), "agent_workspaces")
	put(filepath.Join(ws, "Agent-1", "inbox", "a.md"), "**From:** Agent-2\n\nfor one, by folder\n")
	put(filepath.Join(ws, "Agent-2", "inbox", "b.json"), `{"from": "Agent-1", "to": "Agent-3", "body": "for three, by content"}`)
	put(filepath.Join(ws, "Agent-2", "status.json"), `{"status": "idle"}`)
	glob := filepath.Join(ws, "*", "inbox")
	now := time.Now().Add(time.Minute)
	opts := settings{Shared: []string{glob}}
	c := map[string]consumer{}
	for _, a := range []string{"Agent-1", "Agent-2", "Agent-3"} {
		c[a] = consume(t, openMailbox(t, root, a), opts, now)
	}
	want := map[string][]string{"Agent-1": {"for one, by folder"}, "Agent-2": nil, "Agent-3": {"for three, by content"}}
	for a, w := range want {
		if got := claimBodies(t, c[a], now); !slices.Equal(got, w) {
			t.Errorf("%s claimed %q, want %q", a, got, w)
		}
	}

	// A folder the old writers make after the runners started.
	put(filepath.Join(ws, "Agent-3", "inbox", "c.md"), "**From:** Agent-1\n\nfor three, in a new folder\n")
	now = now.Add(time.Minute)
	for _, a := range []string{"Agent-1", "Agent-2", "Agent-3"} {
		if err := c[a].Scan(now); err != nil {
			t.Fatal(err)
		}
	}
	if got := claimBodies(t, c["Agent-3"], now); !slices.Equal(got, []string{"for three, in a new folder"}) {
		t.Errorf("Agent-3 claimed %q from the new folder", got)
	}
	for _, a := range []string{"Agent-1", "Agent-2"} {
		if got := claimBodies(t, c[a], now); len(got) != 0 {
			t.Errorf("%s claimed %q, another agent's", a, got)
		}
	}
	for _, f := range []string{"Agent-1/inbox/a.md", "Agent-2/inbox/b.json", "Agent-3/inbox/c.md"} {
		if _, err := os.Stat(filepath.Join(ws, f)); err != nil {
			t.Errorf("%s: %v; a watched place is only read", f, err)
		}
	}
}

// A sender written in capitals on a bracketed header, as the A2A writers
// wrote it, arrives as the agent this runtime knows.
func TestSenderInCapitalsIsTheAgent(t *testing.T) {
	root := newRuntime(t, "Agent-1", "Agent-5")
	place := t.TempDir()
	writeFile(t, filepath.Join(place, "a2a.md"), []byte("[A2A] AGENT-5 → Agent-1: review\n\nLook at the lock.\n"))
	now := time.Now().Add(time.Minute)
	c := consume(t, openMailbox(t, root, "Agent-1"), settings{Known: []string{"Agent-1", "Agent-5"}, Watch: []string{place}}, now)
	cl, err := c.Claim(now)
	if err != nil {
		t.Fatal(err)
	}
	if cl.Message.From != "Agent-5" || cl.Message.Body != "Look at the lock." {
		t.Errorf("claimed from %q: %q, want from Agent-5", cl.Message.From, cl.Message.Body)
	}
}
