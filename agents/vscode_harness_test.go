//go:build linux

package agents

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/config/driverconf"
	"github.com/agentctl/agentctl/cursor"
	"github.com/agentctl/agentctl/internal/clock"
	"github.com/agentctl/agentctl/internal/testenv/chromium"
	"github.com/agentctl/agentctl/internal/testenv/codeserver"
	"github.com/agentctl/agentctl/internal/testenv/poll"
	"github.com/agentctl/agentctl/mailbox"
	"github.com/agentctl/agentctl/projectboard"
)

// vscodeSeat is VS Code's chat view in code-server, open in a headless
// Chromium, and a runtime whose agentctl.yaml makes Agent-1 a cdp seat on
// it with the vscode profile.
type vscodeSeat struct {
	server *codeserver.Server
	root   string
	cfg    config.Config
	driver cursor.Driver
}

const vscodeTitle = "Agent-1 — VS Code chat"

// startVSCodeSeat starts one code-server and one Chromium for the test,
// waits for the chat to be ready, and configures the seat the way a user
// would: in agentctl.yaml, read back by config.Load and built by
// cursor.New as `agentctl run` does.
func startVSCodeSeat(t *testing.T, replies string) *vscodeSeat {
	t.Helper()
	ctx, cancel := poll.Context(t)
	defer cancel()
	s := startCodeServer(t, ctx, replies)
	b, err := chromium.Start(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Stop)
	if _, err := b.Open(s.URL); err != nil {
		t.Fatal(err)
	}
	if err := s.WaitChat(ctx, b.Endpoint, vscodeTitle); err != nil {
		t.Fatal(err)
	}
	return newVSCodeRuntime(t, s, fmt.Sprintf(`    driver: cdp
    cdp:
      profile: vscode
      endpoint: %s
      target: '^%s$'
`, b.Endpoint, regexp.QuoteMeta(vscodeTitle)), "gui:\n  turn_timeout: 6m\n")
}

// startCodeServer starts code-server with the fixture's participant and
// replies, titled vscodeTitle.
func startCodeServer(t *testing.T, ctx context.Context, replies string) *codeserver.Server {
	t.Helper()
	command := codeserver.Need(t)
	s, err := codeserver.Start(ctx, command, codeserver.Options{Dir: t.TempDir(),
		Fixture: filepath.Join(repoRoot(), "fixtures", "vscodechat"), Title: vscodeTitle, Replies: []string{replies}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// newVSCodeRuntime writes the runtime's agentctl.yaml, Agent-1 configured
// by seat (its lines after the name) and gui the file's gui section, reads
// it back, and makes the mailboxes, the board and Agent-1's driver.
func newVSCodeRuntime(t *testing.T, s *codeserver.Server, seat, gui string) *vscodeSeat {
	t.Helper()
	root := t.TempDir()
	yaml := "agents:\n  - name: Agent-1\n" + seat + "  - name: Agent-2\npeople: [human]\n" + gui
	if err := os.WriteFile(config.Path(root), []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range cfg.MailboxNames() {
		if err := mailbox.Create(root, name); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(projectboard.Dir(root), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(projectboard.Dir(root), "parser.yaml"), []byte(vscodeBoard), 0o600); err != nil {
		t.Fatal(err)
	}
	agent, err := cfg.Agent("Agent-1")
	if err != nil {
		t.Fatal(err)
	}
	d, err := cursor.New(driverconf.Settings(agent, cfg.GUI), cursor.Options{LockDir: cursor.LockDir(root), Agent: agent.Name})
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := d.(interface{ Close() }); ok {
		t.Cleanup(c.Close)
	}
	return &vscodeSeat{server: s, root: root, cfg: cfg, driver: d}
}

// settings are Agent-1's runner settings from the seat's agentctl.yaml,
// on a fake clock: nothing in the test waits for a backoff or a
// heartbeat.
func (v *vscodeSeat) settings(clock clock.Clock) Settings {
	agent, _ := v.cfg.Agent("Agent-1")
	s := testSettings(v.root, "Agent-1", v.cfg.AgentNames(), v.driver)
	s.People, s.Human = v.cfg.PeopleNames(), v.cfg.Human()
	s.Resend = v.cfg.Run.Resends(agent) // a chat page: never pasted twice
	s.Policy = v.cfg.Coordination.Policy
	s.Clock = clock
	return s
}

// vscodeBoard holds the task of a task message (VS-1) and the one a
// board-task message takes (VS-2), whose notes pick its scripted reply:
// the board-task prompt carries no message body.
const vscodeBoard = `# The parser work.
tasks:
  - id: VS-1
    title: Split the parser
    status: todo
    owner: Agent-1
    priority: high
  - id: VS-2
    title: Document the parser
    status: todo
    owner: Agent-1
    notes: "reply with vscodechat:boardtask"
`

// vscodeReplies are the scripted replies the test adds to the fixture's
// own: the task's and the board task's, with their board changes, and a
// long one.
func vscodeReplies(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"task.md": "Split the parser into `lexer.go` and `parse.go`.\n\n```agentctl\n" +
			`{"board": [{"id": "VS-1", "status": "review", "notes": "split for {{message_id}}"}],` + "\n" +
			` "devlog": "Split the parser for {{message_id}}; VS-1 in review."}` + "\n```\n",
		"boardtask.md": "Documented the parser in `docs/parser.md`.\n\n```agentctl\n" +
			`{"board": [{"id": "VS-2", "status": "done"}], "devlog": "Documented the parser for {{message_id}}."}` + "\n```\n",
		"long.md":   longReply(),
		"long.json": `{"chunk": 600, "delay_ms": 10}`,
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// longReply is a reply of about 40 KB of varied Markdown (headings,
// lists, emphasis, tables, code, wide characters) ending with a block: a
// reader that cuts it, or takes one code block for the reply, loses the
// block or the text before it.
func longReply() string {
	var b strings.Builder
	b.WriteString("# Review of the whole parser\n\n")
	for i := 1; b.Len() < 40_000; i++ {
		fmt.Fprintf(&b, "## Part %d: `part%d.go`\n\n", i, i)
		fmt.Fprintf(&b, "Part %d reads its input **once** and keeps _no_ state between calls; naïve inputs such as "+
			"“%d × π ≈ %.3f” and 日本語 %d pass through untouched, and the error names the line (line %d).\n\n", i, i, float64(i)*3.14159, i, i*7)
		fmt.Fprintf(&b, "- item %d.a: checked with `go test -run Part%d`;\n- item %d.b: 🚀 shipped;\n  - nested %d, a_b_c kept as written.\n\n", i, i, i, i)
		switch i % 6 {
		case 0:
			fmt.Fprintf(&b, "```go\nfunc part%d(s string) int {\n\treturn len(s) + %d // tab-indented\n}\n```\n\n", i, i)
		case 3:
			fmt.Fprintf(&b, "| case | input | result |\n|------|-------|-------:|\n| %d | `x%d` | %d |\n| %d | `y%d` | %d |\n\n", i, i, i*2, i+1, i, i*3)
		case 4:
			fmt.Fprintf(&b, "> Part %d was reviewed twice; the second review found nothing.\n\n", i)
		}
	}
	b.WriteString("Everything above was read.\n\n```agentctl\n{\"devlog\": \"Reviewed the whole parser for {{message_id}}.\"}\n```\n")
	return b.String()
}
