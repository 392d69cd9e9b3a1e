//go:build linux

package main

import (
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/internal/testenv/chromium"
	"github.com/agentctl/agentctl/internal/testenv/codeserver"
	"github.com/agentctl/agentctl/internal/testenv/poll"
)

// chatPageSeat opens the stand-in chat page titled title in a headless
// Chromium, answering as the recorder does (with replyFile if given), and
// returns the browser's DevTools endpoint.
func chatPageSeat(t *testing.T, dir, title, replyFile string, extra url.Values) string {
	t.Helper()
	ctx, cancel := poll.Context(t)
	defer cancel()
	b, err := chromium.Start(ctx, filepath.Join(dir, "profile-"+title))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Stop)
	if replyFile == "" {
		replyFile = "../../fixtures/demo/replies/Agent-1.md"
	}
	port := startRecorder(t, filepath.Join(dir, title+".jsonl"), replyFile)
	q := url.Values{"title": {title}, "think": {"0.2"}, "chunks": {"3"}, "pause": {"0.1"}}
	for k, v := range extra {
		q[k] = v
	}
	if _, err := b.Open("http://127.0.0.1:" + port + "/index.html?" + q.Encode()); err != nil {
		t.Fatal(err)
	}
	awaitPage(t, b.Endpoint, title)
	return b.Endpoint
}

func loadAgent(t *testing.T, root, name string) config.Agent {
	t.Helper()
	cfg, err := config.Load(root)
	if err != nil {
		t.Fatal(err)
	}
	a, err := cfg.Agent(name)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestCalibrateCDPResolvesTheChatPage calibrates the stand-in chat page
// with nothing given: no profile fits it, every selector is proposed from
// the page and proved by a probe and a turn of the driver, and the
// configuration written works as it is: prompt gets the exact reply.
func TestCalibrateCDPResolvesTheChatPage(t *testing.T) {
	dir, root := demoRuntime(t)
	endpoint := chatPageSeat(t, dir, "Agent-1 - Chat", "", nil)
	out := mustAgentctl(t, root, "calibrate", "Agent-1", "--cdp", endpoint)
	t.Logf("agentctl calibrate:\n%s", out)
	for _, want := range []string{
		"profile: none of cursor, vscode fits the page",
		`composer  "#composer" (proposed`,
		`busy      "#send.stop" (proposed`,
		`copy      "#copy" (proposed`,
		`reply     "#transcript > div.msg:not(.user) > div:last-child" (proposed`,
		`proved: the driver sent "Reply with the word proven." and read a 38-byte reply through the page's copy action`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("calibrate did not say %q", want)
		}
	}
	a := loadAgent(t, root, "Agent-1")
	if a.Driver != config.DriverCDP || a.CDP.Profile != "" || a.CDP.Composer != "#composer" || a.CDP.Busy != "#send.stop" || a.CDP.Copy != "#copy" {
		t.Fatalf("calibrate wrote %+v", a.CDP)
	}
	got := mustAgentctl(t, root, "prompt", "Agent-1", "Say hello.\nTwo lines.")
	if want := "You wrote:\nSay hello.\nTwo lines."; strings.TrimRight(got, "\n") != want {
		t.Fatalf("prompt after calibrate gave %q, want %q", got, want)
	}
}

// TestCalibrateCDPWithoutACopyActionFails: a page whose replies have no
// copy button (a code block's does not count) is not calibrated with the
// reply unread: calibrate exits non-zero naming cdp.copy, and says what
// to do.
func TestCalibrateCDPWithoutACopyActionFails(t *testing.T) {
	dir, root := demoRuntime(t)
	endpoint := chatPageSeat(t, dir, "Agent-1 - Chat", "../../fixtures/demo/replies/Agent-1.md", url.Values{"no_copy": {"1"}, "reply_file": {"1"}})
	out, errOut, err := agentctl(t, root, "calibrate", "Agent-1", "--cdp", endpoint)
	t.Logf("agentctl calibrate:\n%s%s", out, errOut)
	if err == nil {
		t.Fatalf("calibrate exited 0 with no copy action")
	}
	if !strings.Contains(errOut, "agentctl: calibrate Agent-1: cdp.reply, cdp.copy not resolved") ||
		!strings.Contains(errOut, "hint: ") || !strings.Contains(errOut, "cdp.read: rendered") {
		t.Fatalf("calibrate said:\n%s", errOut)
	}
	if !strings.Contains(out, "copy      - (NOT RESOLVED") {
		t.Fatalf("calibrate's report:\n%s", out)
	}
}

// TestCalibrateCDPKeepsHandWrittenSelectors: a selector written by hand in
// agentctl.yaml that differs from calibrate's proposal survives a second
// calibrate, which says so and whether it works; with --force the
// proposal replaces it. The file changes only where calibrate writes.
func TestCalibrateCDPKeepsHandWrittenSelectors(t *testing.T) {
	dir, root := demoRuntime(t)
	endpoint := chatPageSeat(t, dir, "Agent-1 - Chat", "", nil)
	mustAgentctl(t, root, "calibrate", "Agent-1", "--cdp", endpoint)
	path := config.Path(root)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	proposed := `'#transcript > div.msg:not(.user) > div:last-child'`
	hand := `'#transcript > .msg:not(.user) > div:last-child'   # chosen by hand`
	edited := strings.Replace(string(data), "reply: "+proposed, "reply: "+hand, 1)
	if edited == string(data) {
		t.Fatalf("no reply line to edit in:\n%s", data)
	}
	if err := os.WriteFile(path, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}

	out := mustAgentctl(t, root, "calibrate", "Agent-1", "--cdp", endpoint, "--prompt", "Reply with the word again.", "--proof-prompt", "And once more.")
	t.Logf("second calibrate:\n%s", out)
	if !strings.Contains(out, `reply     "#transcript > .msg:not(.user) > div:last-child" (kept: its last match is an element the probe's reply brought)`) ||
		!strings.Contains(out, `kept as written in agentctl.yaml; calibrate proposes "#transcript > div.msg:not(.user) > div:last-child" (--force writes it)`) {
		t.Fatalf("the second calibrate did not say it kept the hand-written reply:\n%s", out)
	}
	if got := readFile(t, path); got != edited {
		t.Fatalf("the second calibrate changed the file:\n%s\nwas:\n%s", got, edited)
	}

	out = mustAgentctl(t, root, "calibrate", "Agent-1", "--cdp", endpoint, "--force", "--prompt", "A third time.", "--proof-prompt", "And a fourth.")
	t.Logf("calibrate --force:\n%s", out)
	if got, want := readFile(t, path), strings.Replace(edited, "reply: "+hand, "reply: "+proposed+"   # chosen by hand", 1); got != want {
		t.Fatalf("calibrate --force wrote:\n%s\nwant:\n%s", got, want)
	}
}

// TestCalibrateCDPRecognisesVSCodesChat calibrates VS Code's real chat
// view (code-server, answered by a scripted participant): calibrate says
// it is VS Code's chat, checks the profile's selectors on the live page,
// proves them with a round trip, and writes profile: vscode and nothing
// the profile already says. The configuration works with no hand edit:
// prompt gets the participant's exact Markdown reply.
func TestCalibrateCDPRecognisesVSCodesChat(t *testing.T) {
	command := codeserver.Need(t)
	ctx, cancel := poll.Context(t)
	defer cancel()
	dir, root := demoRuntime(t)
	replies := filepath.Join(dir, "replies")
	reply := "## Checked\n\n- the *composer*\n- the `copy` item\n\n```agentctl\n{\"devlog\": \"calibrated\"}\n```\n"
	if err := os.MkdirAll(replies, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(replies, "checked.md"), []byte(reply), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := codeserver.Start(ctx, command, codeserver.Options{Dir: filepath.Join(dir, "code-server"),
		Fixture: filepath.Join("..", "..", "fixtures", "vscodechat"), Title: "Agent-1 — chat", Replies: []string{replies}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	b, err := chromium.Start(ctx, filepath.Join(dir, "profile"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Stop)
	if _, err := b.Open(s.URL); err != nil {
		t.Fatal(err)
	}
	if err := s.WaitChat(ctx, b.Endpoint, "Agent-1 — chat"); err != nil {
		t.Fatal(err)
	}

	// The scripted model answers every prompt alike unless told: the proof
	// must get another reply than the probe's, as a real model's would be.
	proof := "Reply with the word proven. vscodechat:markdown"
	out := mustAgentctl(t, root, "calibrate", "Agent-1", "--cdp", b.Endpoint, "--proof-prompt", proof)
	t.Logf("agentctl calibrate:\n%s", out)
	for _, want := range []string{
		"profile vscode: the page is VS Code's chat",
		"composer  " + strconv.Quote(config.VSCodeProfile().Composer) + " (profile: matches exactly one visible element)",
		"busy      " + strconv.Quote(config.VSCodeProfile().Busy) + " (profile: showed during the probe's reply only)",
		"reply     " + strconv.Quote(config.VSCodeProfile().Reply) + " (profile: its last match is an element the probe's reply brought)",
		"copy      menu item Copy (profile:",
		`proved: the driver sent "` + proof + `"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("calibrate did not say %q", want)
		}
	}
	a := loadAgent(t, root, "Agent-1")
	if want := (config.CDP{Endpoint: b.Endpoint, Target: "Agent-1", Profile: config.ProfileVSCode}); a.CDP != want || a.Driver != config.DriverCDP {
		t.Fatalf("calibrate wrote %+v (driver %q), want %+v: the profile and nothing it already says", a.CDP, a.Driver, want)
	}

	got := mustAgentctl(t, root, "prompt", "Agent-1", "Check the seat. vscodechat:checked")
	if got != reply && got != reply+"\n" {
		t.Fatalf("prompt after calibrate gave %q, want %q", got, reply)
	}
	ex, err := s.Exchanges()
	if err != nil {
		t.Fatal(err)
	}
	if len(ex) != 3 || ex[0].Prompt != "Reply with the word ready." || ex[1].Prompt != proof || ex[2].Prompt != "Check the seat. vscodechat:checked" {
		t.Fatalf("the participant received %+v", ex)
	}
}

// TestCalibrateCDPProposesOnlyTheChatsInput: of a page's editable
// elements, the search box, the filter field and the code block's editor
// are not the chat's input; the one labelled as the chat's is, by a
// selector matching it alone. Without a probe, busy, reply and copy stay
// unresolved, and calibrate says so and exits non-zero.
func TestCalibrateCDPProposesOnlyTheChatsInput(t *testing.T) {
	dir, root := demoRuntime(t)
	ctx, cancel := poll.Context(t)
	defer cancel()
	b, err := chromium.Start(ctx, filepath.Join(dir, "profile"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Stop)
	page := `<title>Agent-1 chat</title>
<input type="search" placeholder="Search files">
<input type="text" class="filter" placeholder="Filter messages">
<div class="msg"><pre><code>x = 1</code><textarea class="code-input">x = 1</textarea></pre></div>
<div class="input-row"><div class="editor" contenteditable="true" aria-label="Message the agent"></div></div>
<div class="input-row"><textarea class="editor" readonly></textarea></div>`
	if _, err := b.Open("data:text/html," + url.PathEscape(page)); err != nil {
		t.Fatal(err)
	}
	awaitPage(t, b.Endpoint, "Agent-1 chat")
	out, errOut, err := agentctl(t, root, "calibrate", "Agent-1", "--cdp", b.Endpoint, "--probe=false")
	t.Logf("agentctl calibrate:\n%s%s", out, errOut)
	if !strings.Contains(out, `composer  "div[aria-label=\"Message the agent\"]" (proposed`) {
		t.Fatalf("calibrate proposed another composer:\n%s", out)
	}
	if err == nil || !strings.Contains(errOut, "agentctl: calibrate Agent-1: cdp.busy, cdp.reply, cdp.copy not resolved") {
		t.Fatalf("calibrate without a probe: %v\n%s", err, errOut)
	}
}
