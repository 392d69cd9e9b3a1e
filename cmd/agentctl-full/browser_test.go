//go:build linux

package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/agentctl/agentctl/agents/missioncontrol"
	"github.com/agentctl/agentctl/internal/process"
	"github.com/agentctl/agentctl/internal/testenv/chromium"
	"github.com/agentctl/agentctl/internal/testenv/poll"
	"github.com/agentctl/agentctl/mailbox"
)

// gatedAgent is the demo's scripted headless agent, held back until the
// file "go" exists, so the page can be seen while a turn is under way.
const gatedAgent = `cat >/dev/null
while [ ! -f "$DIR/go" ]; do sleep 0.05; done
exec sh "$DEMO/agent.sh" "$1" </dev/null
`

// startServe runs 'agentctl serve' on a free loopback port and returns the
// URL it printed.
func startServe(t testing.TB, root string) string {
	t.Helper()
	cmd := exec.Command("agentctl", "--root", root, "serve", "--addr", "127.0.0.1:0")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("serve printed no URL: %v", err)
	}
	url := regexp.MustCompile(`http://\S+`).FindString(line)
	if url == "" {
		t.Fatalf("serve printed %q, with no URL", line)
	}
	return url
}

// headlessChromium starts Debian's chromium for the test, headless, with a
// profile of its own and nothing that reaches the network
// (testenv/chromium), and returns a context that drives its first page.
// The whole browser, helpers and all, is gone before the profile is
// removed: a renderer left writing into it made the removal fail.
func headlessChromium(t testing.TB) context.Context {
	t.Helper()
	profile := t.TempDir()
	tctx, cancelTest := poll.Context(t)
	b, err := chromium.Start(tctx, profile)
	if err != nil {
		cancelTest()
		t.Fatal(err)
	}
	t.Cleanup(b.Stop)
	actx, cancelAlloc := chromedp.NewRemoteAllocator(tctx, b.Endpoint)
	ctx, cancelCtx := chromedp.NewContext(actx, chromedp.WithLogf(func(string, ...any) {}), chromedp.WithErrorf(func(string, ...any) {}))
	t.Cleanup(func() { cancelCtx(); cancelAlloc(); cancelTest() })
	return ctx
}

// text is the text of the first element matching sel, or "" when none.
func text(ctx context.Context, t *testing.T, sel string) string {
	t.Helper()
	var s string
	js := fmt.Sprintf(`(document.querySelector(%q) || {innerText: ""}).innerText`, sel)
	if err := chromedp.Run(ctx, chromedp.Evaluate(js, &s)); err != nil {
		t.Fatalf("reading %s: %v", sel, err)
	}
	return s
}

// awaitGone waits until nothing on the page matches sel.
func awaitGone(ctx context.Context, t *testing.T, sel string) {
	t.Helper()
	js := fmt.Sprintf(`document.querySelector(%q) === null`, sel)
	poll.Until(t, "the page to show no "+sel, func() bool {
		var gone bool
		if err := chromedp.Run(ctx, chromedp.Evaluate(js, &gone)); err != nil {
			t.Fatalf("looking for %s: %v", sel, err)
		}
		return gone
	})
}

// awaitText waits until the text of sel contains want.
func awaitText(ctx context.Context, t *testing.T, sel, want string) {
	t.Helper()
	poll.Until(t, fmt.Sprintf("the page's %s to show %q", sel, want), func() bool { return strings.Contains(text(ctx, t, sel), want) })
}

func TestMissionControlPageInHeadlessChromiumFollowsARunningFlow(t *testing.T) {
	dir, root := demoRuntime(t)
	demo, _ := filepath.Abs("../../fixtures/demo")
	script := filepath.Join(dir, "agent.sh")
	if err := os.WriteFile(script, []byte(gatedAgent), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, a := range []string{"Agent-1", "Agent-2", "Agent-3"} {
		runner := exec.Command("agentctl", "--root", root, "run", a, "--", "sh", script, a)
		runner.Env = append(os.Environ(), "DIR="+dir, "DEMO="+demo)
		runner.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := runner.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { runner.Process.Signal(syscall.SIGTERM); runner.Wait() })
	}
	url := startServe(t, root)
	ctx := headlessChromium(t)
	if err := chromedp.Run(ctx, chromedp.Navigate(url), chromedp.WaitVisible(`[data-agent="Agent-3"]`)); err != nil {
		t.Fatalf("loading %s: %v", url, err)
	}
	awaitText(ctx, t, "#live", "live")
	for _, a := range []string{"Agent-1", "Agent-2", "Agent-3"} {
		awaitText(ctx, t, fmt.Sprintf(`[data-agent=%q] .state`, a), "idle")
	}
	awaitText(ctx, t, `[data-status="todo"]`, "DEMO-1")

	// A task sent from the page's form, with the token the URL carried.
	if err := chromedp.Run(ctx,
		chromedp.SetValue(`#send select[name="priority"]`, "high", chromedp.ByQuery),
		chromedp.SetValue(`#send input[name="task_id"]`, "DEMO-1", chromedp.ByQuery),
		chromedp.SetValue(`#send input[name="subject"]`, "DEMO-1: add a greeting", chromedp.ByQuery),
		chromedp.SetValue(`#send input[name="type"]`, "task", chromedp.ByQuery),
		chromedp.SetValue(`#send textarea[name="body"]`, "Add greet(name) with a test, then hand it to Agent-2.", chromedp.ByQuery),
		chromedp.Click(`#send button`, chromedp.ByQuery),
	); err != nil {
		t.Fatal(err)
	}
	awaitText(ctx, t, "#notice", "sent msg_")
	awaitText(ctx, t, `[data-agent="Agent-1"] .state`, "working")
	awaitText(ctx, t, `[data-agent="Agent-1"] .current`, "DEMO-1: add a greeting")

	// The work travels Agent-1 → Agent-2 → Agent-3; the page follows.
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	awaitText(ctx, t, `[data-agent="Agent-3"] .done`, "done 1")
	awaitText(ctx, t, `[data-status="done"]`, "DEMO-1")
	awaitText(ctx, t, `#threads`, "Agent-2 → Agent-3")
	awaitText(ctx, t, `[data-task="DEMO-1"] .messages summary`, "3 message(s)")
	for _, a := range []string{"Agent-1", "Agent-2", "Agent-3"} {
		awaitText(ctx, t, fmt.Sprintf(`[data-agent=%q] .state`, a), "idle")
		awaitText(ctx, t, fmt.Sprintf(`[data-agent=%q] .lastlog`, a), "ago")
	}

	// A question for the human, answered in the page's reply box.
	human, err := mailbox.Open(root, "human")
	if err != nil {
		t.Fatal(err)
	}
	q := mailbox.Message{ID: mailbox.NewID(time.Now()), From: "Agent-3", To: "human", Subject: "which tag?", Body: "v0.1.0 or v1.0.0?", CreatedAt: time.Now().UTC()}
	if err := human.Deliver(q); err != nil {
		t.Fatal(err)
	}
	box := fmt.Sprintf(`[data-question=%q]`, q.ID)
	awaitText(ctx, t, box, "which tag?")
	// The page redraws between the button's press and its release, as a
	// new snapshot or the clock's redraw can: the click must still count.
	var at []float64
	if err := chromedp.Run(ctx, chromedp.SendKeys(box+" input", "v0.1.0", chromedp.ByQuery),
		chromedp.Evaluate(fmt.Sprintf(`(() => { const r = document.querySelector(%q).getBoundingClientRect(); return [r.x + r.width/2, r.y + r.height/2]; })()`, box+" button"), &at)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Run(ctx,
		chromedp.MouseEvent(input.MousePressed, at[0], at[1], chromedp.ButtonLeft, chromedp.ClickCount(1)),
		chromedp.Evaluate(`render()`, nil),
		chromedp.MouseEvent(input.MouseReleased, at[0], at[1], chromedp.ButtonLeft, chromedp.ClickCount(1)),
	); err != nil {
		t.Fatal(err)
	}
	awaitText(ctx, t, "#notice", "answered "+q.ID)
	// What else waits for the human (the dependency notice of DEMO-2) stays.
	awaitGone(ctx, t, box)
	awaitText(ctx, t, "#people", "DEMO-2 can go ahead")

	// An approval request, approved with the page's button.
	held := heldSend("send[7]", "Agent-2", "held by a guardrail")
	if err := human.Deliver(held); err != nil {
		t.Fatal(err)
	}
	row := fmt.Sprintf(`[data-question=%q]`, held.ID)
	awaitText(ctx, t, row, "approval: Agent-1 wants to send")
	if err := chromedp.Run(ctx, chromedp.Click(fmt.Sprintf(`[data-approve=%q]`, held.ID), chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	awaitText(ctx, t, "#notice", "approved: send msg_held_7 to Agent-2")
	awaitGone(ctx, t, row)
	if found, _ := human.Locate(q.ID); len(found) != 1 || found[0].Receipt == nil || found[0].Receipt.Outcome != "answered" {
		t.Fatalf("the question after the page's reply: %+v", found)
	}

	// A file that is not a message, dead-lettered by the runner; the
	// page's retry button says why it cannot be retried.
	inbox := filepath.Join(mailbox.Dir(root, "Agent-1"), "inbox", "broken.json")
	if err := os.WriteFile(inbox, []byte(`{"to": "Agent-1", "body": `), 0o644); err != nil {
		t.Fatal(err)
	}
	awaitText(ctx, t, "#dead", "broken")
	if err := chromedp.Run(ctx, chromedp.Click(`#dead .row button`, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	awaitText(ctx, t, "#notice", "still cannot be read")

	var png []byte
	if err := chromedp.Run(ctx, chromedp.FullScreenshot(&png, 100)); err != nil {
		t.Fatal(err)
	}
	shot := os.Getenv("AGENTCTL_SCREENSHOT") // where the screenshot of docs/running.md is made
	if shot == "" {
		shot = filepath.Join(dir, "mission-control.png")
	}
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", shot, len(png))
}

// BenchmarkMissionControlPageUpdate drops a message file into an inbox and
// times how long until headless Chromium's page shows it: the page records
// when its tile changed (a MutationObserver, the browser's clock), so the
// figure is file event → DOM, without the benchmark's own polling.
func BenchmarkMissionControlPageUpdate(b *testing.B) {
	root := filepath.Join(b.TempDir(), "runtime")
	mustAgentctl(b, root, "init", "--agents", "8")
	url := startServe(b, root)
	ctx := headlessChromium(b)
	if err := chromedp.Run(ctx, chromedp.Navigate(url), chromedp.WaitVisible(`[data-agent="Agent-5"]`)); err != nil {
		b.Fatal(err)
	}
	const observe = `window.seen = {};
new MutationObserver(() => {
  const t = document.querySelector('[data-agent="Agent-5"] .pending');
  if (t && !(t.innerText in window.seen)) window.seen[t.innerText] = Date.now();
}).observe(document.getElementById("agents"), {childList: true, subtree: true, characterData: true});`
	if err := chromedp.Run(ctx, chromedp.Evaluate(observe, nil)); err != nil {
		b.Fatal(err)
	}
	inbox := filepath.Join(mailbox.Dir(root, "Agent-5"), "inbox")
	var lat []float64
	b.ResetTimer()
	for i := range b.N {
		tmp := filepath.Join(inbox, fmt.Sprintf(".bench-%d.tmp", i))
		msg := fmt.Sprintf(`{"id": "bench-%d", "from": "human", "to": "Agent-5", "body": "n"}`, i)
		if err := os.WriteFile(tmp, []byte(msg), 0o644); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if err := os.Rename(tmp, filepath.Join(inbox, fmt.Sprintf("bench-%d.json", i))); err != nil {
			b.Fatal(err)
		}
		var shownAt float64
		for shownAt == 0 {
			if err := chromedp.Run(ctx, chromedp.Evaluate(fmt.Sprintf(`window.seen["queue %d"] || 0`, i+1), &shownAt)); err != nil {
				b.Fatal(err)
			}
			if shownAt == 0 {
				time.Sleep(5 * time.Millisecond)
			}
		}
		lat = append(lat, shownAt-float64(start.UnixNano())/1e6)
	}
	b.StopTimer()
	sort.Float64s(lat)
	b.ReportMetric(lat[len(lat)/2], "p50-ms")
	b.ReportMetric(lat[int(0.99*float64(len(lat)-1))], "p99-ms")
}

func TestMissionControlStallsRateLimitsAndTheDesktopLockStandOutInBothViews(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "runtime")
	mustAgentctl(t, root, "init", "--agents", "3")
	host, _ := os.Hostname()
	now := time.Now().UTC()
	// Heartbeats as runners write them, naming this live process: Agent-1
	// rate-limited, Agent-2 an hour into one turn, Agent-3 in a fresh turn
	// and holding the desktop input lock.
	for _, st := range []mailbox.Status{
		{Agent: "Agent-1", State: "rate-limited", Since: now},
		{Agent: "Agent-2", State: "working", Current: "msg_stuck", Subject: "endless refactor", Since: now.Add(-time.Hour)},
		{Agent: "Agent-3", State: "working", Current: "msg_fresh", Subject: "quick fix", Since: now},
	} {
		mb, err := mailbox.Open(root, st.Agent)
		if err != nil {
			t.Fatal(err)
		}
		st.PID, st.Host, st.StartedAt, st.UpdatedAt = os.Getpid(), host, now, now
		if err := mb.WriteStatus(st); err != nil {
			t.Fatal(err)
		}
	}
	start, _ := process.StartTime(os.Getpid())
	holder := fmt.Sprintf(`{"lock": "desktop-_99.lock", "pid": %d, "start": %d, "agent": "Agent-3", "since": %q}`, os.Getpid(), start, now.Format(time.RFC3339Nano))
	os.MkdirAll(filepath.Join(root, "locks"), 0o755)
	if err := os.WriteFile(filepath.Join(root, "locks", "desktop-_99.lock.holder"), []byte(holder), 0o644); err != nil {
		t.Fatal(err)
	}

	url := startServe(t, root)
	ctx := headlessChromium(t)
	if err := chromedp.Run(ctx, chromedp.Navigate(url), chromedp.WaitVisible(`[data-agent="Agent-3"]`)); err != nil {
		t.Fatal(err)
	}
	awaitText(ctx, t, `[data-agent="Agent-1"] .state`, "rate-limited")
	awaitText(ctx, t, `.tile.stalled[data-agent="Agent-2"] .state`, "stalled for 60m")
	awaitText(ctx, t, `[data-agent="Agent-2"] .current`, "endless refactor")
	awaitText(ctx, t, `[data-agent="Agent-3"] .state`, "working")
	awaitText(ctx, t, `[data-agent="Agent-3"] .lock`, "holds the desktop lock")
	awaitText(ctx, t, `#locks`, "desktop input lock desktop-_99.lock: Agent-3")
	if got := text(ctx, t, `.tile.stalled`); !strings.Contains(got, "Agent-2") || strings.Contains(got, "Agent-3") {
		t.Errorf("the stalled tiles: %q", got)
	}

	tm := startTmux(t, dir, "--root", root, "top")
	screen := tm.await("rate-limited", "STALLED", "endless refactor", "desktop input lock desktop-_99.lock: Agent-3")
	for _, line := range strings.Split(screen, "\n") {
		if strings.HasPrefix(line, "Agent-3") && (strings.Contains(line, "STALLED") || !strings.Contains(line, "🔒")) {
			t.Errorf("Agent-3's row: %q", line)
		}
	}
	tm.keys("q")
}

// plainAgent replies as a chat read from its rendering does: prose, no
// block; asked to hand on, it ends with a block that sends to Agent-2.
const plainAgent = `case "$(cat)" in
*"hand it on"*) printf 'Handed on.\n\n` + "```" + `agentctl\n{"send": [{"to": "Agent-2", "subject": "take it", "body": "over to you"}]}\n` + "```" + `\n' ;;
*) echo "Done: handed to Agent-2 for review." ;;
esac
`

func TestMissionControlShowsRepliesWithoutTheBlockInBothViews(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "runtime")
	mustAgentctl(t, root, "init", "--agents", "2")
	script := filepath.Join(dir, "agent.sh")
	if err := os.WriteFile(script, []byte(plainAgent), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, a := range []string{"Agent-1", "Agent-2"} {
		runner := exec.Command("agentctl", "--root", root, "run", a, "--", "sh", script)
		runner.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := runner.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { runner.Process.Signal(syscall.SIGTERM); runner.Wait() })
	}
	// Agent-1 hands one on (a thread whose second hop ends without the
	// block), then replies three times without it.
	mustAgentctl(t, root, "send", "--to", "Agent-1", "--subject", "start", "hand it on")
	for i := 1; i <= 3; i++ {
		mustAgentctl(t, root, "send", "--to", "Agent-1", "--subject", fmt.Sprintf("plain %d", i), "review this")
	}

	url := startServe(t, root)
	ctx := headlessChromium(t)
	if err := chromedp.Run(ctx, chromedp.Navigate(url), chromedp.WaitVisible(`[data-agent="Agent-2"]`)); err != nil {
		t.Fatal(err)
	}
	awaitText(ctx, t, `[data-agent="Agent-1"] .done`, "done 4")
	awaitText(ctx, t, `[data-agent="Agent-1"] .without-block`, "3 without block")
	awaitText(ctx, t, `[data-agent="Agent-1"] .no-block-run`, "last 3 replies had no agentctl block")
	awaitText(ctx, t, `[data-agent="Agent-2"] .without-block`, "1 without block")
	awaitText(ctx, t, `#threads .outcome.warn`, "done without block")
	awaitText(ctx, t, `#people`, "Agent-1: 3 replies in a row without the agentctl block")
	if got := text(ctx, t, `[data-agent="Agent-2"] .no-block-run`); got != "" {
		t.Errorf("Agent-2, one reply without the block, shows a run: %q", got)
	}

	tm := startTmux(t, dir, "--root", root, "top")
	tm.await("Agent-1: 3 done without block, the last 3 replies in a row had no agentctl block", "Agent-2: 1 done without block (agentctl inbox Agent-2 --state done)")
	tm.keys("q")
}

// A folder longer than a snapshot holds shows its newest, the exact count,
// and a "more" link that loads the rest into the page until none is left.
func TestMissionControlPageLoadsMoreThanASnapshotHolds(t *testing.T) {
	_, root := demoRuntime(t)
	mb, err := mailbox.Open(root, "Agent-2")
	if err != nil {
		t.Fatal(err)
	}
	const n = missioncontrol.DefaultShown + 5
	base := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	for i := range n {
		msg := mailbox.Message{ID: fmt.Sprintf("dead-%03d", i), From: "Agent-1", To: "Agent-2", Subject: fmt.Sprint("dead ", i),
			Body: "b", CreatedAt: base.Add(time.Duration(i) * time.Minute)}
		if _, err := mb.WriteDeadLetter(mailbox.Letter{Name: mailbox.Stem(msg.ID) + ".json", Data: msg.Encode(), Origin: "test",
			ID: msg.ID, Reason: "refused"}, base); err != nil {
			t.Fatal(err)
		}
	}
	url := startServe(t, root)
	ctx := headlessChromium(t)
	if err := chromedp.Run(ctx, chromedp.Navigate(url), chromedp.WaitVisible(`[data-agent="Agent-2"]`)); err != nil {
		t.Fatalf("loading %s: %v", url, err)
	}
	awaitText(ctx, t, `[data-agent="Agent-2"] .deadcount`, fmt.Sprint("dead ", n))
	awaitText(ctx, t, `[data-more="dead:Agent-2"]`, "5 not shown")
	rows := func() int {
		var got int
		if err := chromedp.Run(ctx, chromedp.Evaluate(`document.querySelectorAll("[data-dead]").length`, &got)); err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := rows(); got != missioncontrol.DefaultShown {
		t.Fatalf("the page lists %d dead letters before 'more', want %d", got, missioncontrol.DefaultShown)
	}
	if err := chromedp.Run(ctx, chromedp.Click(`[data-more="dead:Agent-2"] a`, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	awaitGone(ctx, t, `[data-more="dead:Agent-2"]`)
	awaitText(ctx, t, "#dead", "dead 0\n") // the oldest, past the cap
	if got := rows(); got != n {
		t.Errorf("the page lists %d dead letters after 'more', want %d", got, n)
	}
}
