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

// With NoRetries each tool gives up at the model's first refusal: one
// request, answered 429, and the command fails, where by default it waits
// the 7 s the server names and asks again, and then gets its reply.
func TestNoRetriesGivesUpAtTheFirstRefusal(t *testing.T) {
	for name, args := range map[string][]string{
		Claude: {"-p", "--output-format", "json", "hello"},
		Codex:  {"exec", "--json", "--skip-git-repo-check", "hello"},
		Gemini: {"-p", "hello", "--output-format", "json"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := fakemodel.Start(t)
			tool := Get(t, name, srv)
			if err := tool.NoRetries(); err != nil {
				t.Fatal(err)
			}
			srv.FailNext(1, 7)
			cmd := exec.Command(tool.Path, args...)
			cmd.Env = tool.Environ()
			cmd.Dir = t.TempDir()
			out, err := cmd.Output()
			if err == nil {
				t.Errorf("%s succeeded after a 429:\n%s", name, out)
			}
			var statuses []int
			for _, r := range srv.Turns() {
				statuses = append(statuses, r.Status)
			}
			if len(statuses) != 1 || statuses[0] != 429 {
				t.Errorf("the server answered %v, want one 429", statuses)
			}
		})
	}
}
