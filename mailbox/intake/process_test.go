package intake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentctl/agentctl/internal/testenv/poll"
	"github.com/agentctl/agentctl/mailbox"
)

// Writers that behave exactly like the Dream.OS Python ones (flock, read,
// append, rewrite in place) race with the consumer's ingest of inbox.json:
// nothing lost or doubled, and inbox.json always valid JSON in the shape
// its writers use (an array, or a container object whose writer fails on
// anything else), with or without a byte order mark.
func TestDreamOSWritersRaceIngest(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is needed to run the Dream.OS writer: ", err)
	}
	for _, style := range []string{"array", "container", "bom"} {
		t.Run(style, func(t *testing.T) { testWritersRaceIngest(t, python, style) })
	}
}

func testWritersRaceIngest(t *testing.T, python, style string) {
	const writers, each = 4, 100
	root := newRuntime(t, "Agent-1")
	mb := openMailbox(t, root, "Agent-1")
	consumer := startRole(t, "consume", "MAILBOX_ROOT="+root, "MAILBOX_AGENT=Agent-1", "MAILBOX_DONE="+filepath.Join(root, "done"))
	args := []string{"--no-ids"}
	switch style {
	case "container":
		args = append(args, "--container")
		// The writer makes the container only when no file is there.
		writeFile(t, filepath.Join(mb.Dir, mailbox.InboxJSON), []byte(`{"messages": [], "metadata": {"total": 0}}`))
	case "bom":
		args = append(args, "--bom")
	}
	var procs []*exec.Cmd
	for w := range writers {
		cmd := exec.Command(python, append([]string{"../../fixtures/dreamos/inbox_writer.py", mb.Dir, fmt.Sprintf("py%d", w), fmt.Sprint(each)}, args...)...)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs = append(procs, cmd)
	}
	for _, p := range procs {
		if err := p.Wait(); err != nil {
			t.Fatalf("Dream.OS writer: %v", err)
		}
	}
	var bodies map[string]int
	poll.Until(t, fmt.Sprintf("%d messages archived", writers*each), func() bool {
		bodies = archivedBodies(t, mb)
		return len(bodies) >= writers*each
	})
	stopConsumer(t, root, consumer)
	for w := range writers {
		for n := range each {
			if b := fmt.Sprintf("py%d-%d", w, n); bodies[b] != 1 {
				t.Errorf("%s archived %d times", b, bodies[b])
			}
		}
	}
	left, _ := os.ReadFile(filepath.Join(mb.Dir, mailbox.InboxJSON))
	want := "[]"
	if style == "container" {
		want = fmt.Sprintf(`{"messages":[],"metadata":{"total":%d}}`, writers*each)
		var compact bytes.Buffer
		if err := json.Compact(&compact, left); err == nil {
			left = compact.Bytes()
		}
	}
	if got := strings.TrimSpace(string(left)); got != want {
		t.Errorf("inbox.json = %.200q, want %s", got, want)
	}
	if dl := names(t, filepath.Join(mb.Dir, mailbox.DeadletterDir)); len(dl) != 0 {
		t.Errorf("deadletter holds %v", dl)
	}
}
