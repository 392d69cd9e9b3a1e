package agentcli

import (
	"encoding/json"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/agentctl/agentctl/fixtures/fakemodel"
)

// Each exec tool, set up by Get, answers from the fake model server and
// from nothing else: the reply the server was told to give comes back.
func TestToolsTalkToFakeModel(t *testing.T) {
	reply := "exact ```agentctl\nx\n```\n"
	prompt := "hello\nfakemodel: reply " + strconv.Quote(reply)
	quoted, _ := json.Marshal(reply)
	for name, args := range map[string][]string{
		Claude: {"-p", "--output-format", "json", prompt},
		Codex:  {"exec", "--json", "--skip-git-repo-check", prompt},
		Gemini: {"-p", prompt, "--output-format", "json"},
	} {
		t.Run(name, func(t *testing.T) {
			srv := fakemodel.Start(t)
			tool := Get(t, name, srv)
			cmd := exec.Command(tool.Path, args...)
			cmd.Env = tool.Environ()
			cmd.Dir = t.TempDir()
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%s: %v\n%s", name, err, out)
			}
			if !strings.Contains(string(out), string(quoted)) {
				t.Errorf("the output lacks the reply %s:\n%s", quoted, out)
			}
			if len(srv.Turns()) == 0 {
				t.Errorf("the server saw no turn")
			}
		})
	}
}
