package agents

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentctl/agentctl/mailbox"
)

func TestParseReply(t *testing.T) {
	for _, tc := range []struct {
		name, reply string
		sends       int
		board       int
		devlog      string
		blockErr    string
		refused     string // an item refused while the rest applies
		reportDone  bool
	}{
		{name: "no block", reply: "just text"},
		{name: "one block", reply: "ok\n```agentctl\n{\"send\": [{\"to\": \"all\", \"body\": \"hi\"}], \"devlog\": \"d\"}\n```\n", sends: 1, devlog: "d"},
		{name: "last block counts", reply: "```agentctl\n{\"devlog\": \"first\"}\n```\ntext\n```agentctl\n{\"devlog\": \"second\"}\n```", devlog: "second"},
		{name: "other fences ignored", reply: "```json\n{\"devlog\": \"no\"}\n```\n```go\nx := 1\n```", devlog: ""},
		{name: "agentctl inside another block is not a block", reply: "````md\n```agentctl\n{\"devlog\": \"quoted\"}\n```\n````"},
		{name: "bad json", reply: "```agentctl\n{\"send\": [\n```", blockErr: "not a JSON object"},
		{name: "not an object", reply: "```agentctl\n[1, 2]\n```", blockErr: "not a JSON object"},
		{name: "null", reply: "```agentctl\nnull\n```", blockErr: "not a JSON object"},
		{name: "unknown key", reply: "```agentctl\n{\"sned\": [], \"devlog\": \"kept\"}\n```", devlog: "kept", refused: `unknown key "sned"`},
		{name: "two objects", reply: "```agentctl\n{\"devlog\": \"kept\"} {}\n```", devlog: "kept", refused: "text after"},
		{name: "unclosed", reply: "```agentctl\n{\"devlog\": \"x\"}", blockErr: "not closed"},
		{name: "empty board change", reply: "```agentctl\n{\"board\": [{\"id\": \"T-1\"}]}\n```", refused: "board[0] (T-1): nothing to change"},
		{name: "missing body", reply: "```agentctl\n{\"send\": [{\"to\": \"Agent-2\"}]}\n```", refused: "send[0] to Agent-2: \"body\" is empty"},
		{name: "item by item", reply: "```agentctl\n{\"send\": [{\"to\": \"Agent-2\", \"body\": \"ok\"}, {\"to\": \"Agent-3\", \"bdy\": \"typo\"}, 7], \"board\": [{\"id\": \"T-1\", \"status\": \"done\"}], \"devlog\": 3}\n```",
			sends: 1, board: 1, refused: `send[1]: not usable: json: unknown field "bdy"`},
		{name: "one object for a list", reply: "```agentctl\n{\"send\": {\"to\": \"Agent-2\", \"body\": \"ok\"}}\n```", sends: 1},
		{name: "board", reply: "```agentctl\n{\"board\": [{\"id\": \"T-1\", \"status\": \"done\"}]}\n```", board: 1},
		{name: "dream.os report", reply: "**Task:** T-7 parser\n**Actions:**\n- split it\n2. tested it\n**Commit Message:** refactor: split\n**Status:** ✅ done", reportDone: true},
		{name: "dream.os report plain", reply: "Task: T-7 parser\nActions:\n- split it\n2. tested it\nCommit Message: refactor: split\nStatus: Complete", reportDone: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := ParseReply(tc.reply)
			if tc.blockErr != "" {
				if p.Actions != nil || !strings.Contains(p.BlockError, tc.blockErr) {
					t.Fatalf("got %+v, want a refused block mentioning %q", p, tc.blockErr)
				}
				return
			}
			if p.BlockError != "" {
				t.Fatalf("block error %q", p.BlockError)
			}
			var a Actions
			if p.Actions != nil {
				a = *p.Actions
			}
			if len(a.Send) != tc.sends || len(a.Board) != tc.board || a.Devlog != tc.devlog {
				t.Errorf("got %+v", a)
			}
			if refused := strings.Join(a.Refused, "\n"); !strings.Contains(refused, tc.refused) || tc.refused == "" && refused != "" {
				t.Errorf("refused %q, want it to mention %q", refused, tc.refused)
			}
			if p.Report.Done() != tc.reportDone {
				t.Errorf("report %+v: done = %v, want %v", p.Report, p.Report.Done(), tc.reportDone)
			}
		})
	}
	p := ParseReply("Task: T-7 parser\nActions:\n- split it\n2. tested it\nCommit Message: refactor: split\nStatus: done\n")
	if p.Report == nil || p.Report.Task != "T-7 parser" || len(p.Report.Actions) != 2 || p.Report.CommitMessage != "refactor: split" {
		t.Errorf("report = %+v", p.Report)
	}
}

func TestTemplates(t *testing.T) {
	dir := t.TempDir()
	tm := Templates{Dir: dir}
	msg := mailbox.Message{ID: "m1", From: "Agent-2", To: "Agent-1", Type: "task", Priority: mailbox.Urgent, Subject: "s", Body: "do it", TaskID: "T-9", CreatedAt: time.Now()}
	out, err := tm.Render(PromptData{Agent: "Agent-1", Others: []string{"Agent-2"}, Message: msg})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"You are Agent-1,", "(the others: Agent-2)", "assigned you a task (urgent priority)", "Board task: T-9 (not on any board)", "Message:\ndo it\n", "info string is agentctl"} {
		if !strings.Contains(out, want) {
			t.Errorf("prompt lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "```agentctl") {
		t.Error("the prompt holds a literal agentctl block that an echoing agent would act on")
	}
	// A file under the templates folder overrides the type; default.tmpl the rest.
	os.WriteFile(filepath.Join(dir, "task.tmpl"), []byte("TASK {{.Message.Body}} for {{.Agent}}"), 0o600)
	os.WriteFile(filepath.Join(dir, "default.tmpl"), []byte("DEFAULT {{.Message.Subject}}"), 0o600)
	if out, _ := tm.Render(PromptData{Agent: "Agent-1", Message: msg}); out != "TASK do it for Agent-1" {
		t.Errorf("task override: %q", out)
	}
	// An edit applies to the next prompt: templates are read each time.
	os.WriteFile(filepath.Join(dir, "task.tmpl"), []byte("EDITED {{.Message.Body}}"), 0o600)
	if out, _ := tm.Render(PromptData{Agent: "Agent-1", Message: msg}); out != "EDITED do it" {
		t.Errorf("edited task override: %q", out)
	}
	msg.Type = "../../etc/passwd"
	if out, _ := tm.Render(PromptData{Agent: "Agent-1", Message: msg}); out != "DEFAULT s" {
		t.Errorf("odd type must fall back to default.tmpl: %q", out)
	}
	os.WriteFile(filepath.Join(dir, "default.tmpl"), []byte("{{.Nope}}"), 0o600)
	if _, err := tm.Render(PromptData{Agent: "Agent-1", Message: msg}); err == nil {
		t.Error("a template naming an unknown field rendered")
	}
}

func TestRateLimit(t *testing.T) {
	l := newRateLimit(2, 3)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, step := range []struct {
		at    time.Duration
		ok    bool
		until time.Duration
	}{{0, true, 0}, {time.Second, true, 0}, {2 * time.Second, false, time.Minute}, {61 * time.Second, true, 0}, {62 * time.Second, false, time.Hour}} {
		ok, until := l.allow(t0.Add(step.at))
		if ok != step.ok || (!ok && !until.Equal(t0.Add(step.until))) {
			t.Fatalf("step %d: allow = %v until %v", i, ok, until)
		}
		if ok {
			l.add(t0.Add(step.at))
		}
	}
}
