//go:build linux

package notify

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentctl/agentctl/internal/clock/clocktest"
	"github.com/agentctl/agentctl/internal/layout"
	"github.com/agentctl/agentctl/mailbox"
)

// The desktop way runs notify-send with the title and the body; a fake
// one on PATH records its arguments.
func TestDesktopRunsNotifySend(t *testing.T) {
	bin := t.TempDir()
	args := filepath.Join(t.TempDir(), "args")
	script := "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > " + args + "\n"
	if err := os.WriteFile(filepath.Join(bin, "notify-send"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	if err := (Settings{Desktop: true}).tell(context.Background(), "desktop", question); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(args)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(got)), "\n")
	want := []string{"--app-name=agentctl", "--urgency=critical", "--", title(question), question.Body}
	if strings.Join(lines, "|") != strings.Join(want, "|") {
		t.Errorf("notify-send got %q, want %q", lines, want)
	}
}

// The command way gets the message in AGENTCTL_NOTIFY_* and as JSON on
// stdin.
func TestCommandGetsEnvAndJSON(t *testing.T) {
	dir := t.TempDir()
	env, stdin := filepath.Join(dir, "env"), filepath.Join(dir, "stdin")
	s := Settings{Command: []string{"sh", "-c", `printf '%s\n%s\n%s\n' "$AGENTCTL_NOTIFY_SUBJECT" "$AGENTCTL_NOTIFY_FROM" "$AGENTCTL_NOTIFY_BODY" > ` + env + `; cat > ` + stdin}}
	if err := s.tell(context.Background(), "command", question); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(env)
	if want := question.Subject + "\n" + question.From + "\n" + question.Body + "\n"; string(got) != want {
		t.Errorf("the command's environment gave %q, want %q", got, want)
	}
	var m mailbox.Message
	data, _ := os.ReadFile(stdin)
	if err := json.Unmarshal(data, &m); err != nil || m.ID != question.ID || m.Body != question.Body {
		t.Errorf("stdin %q: %v", data, err)
	}
	s.Command = []string{"sh", "-c", "echo broken >&2; exit 3"}
	if err := s.tell(context.Background(), "command", question); err == nil || !strings.Contains(err.Error(), "broken") {
		t.Errorf("a failing command gave %v", err)
	}
}

func deliver(t *testing.T, root, id string) {
	t.Helper()
	mb, err := mailbox.Open(root, "human")
	if err != nil {
		t.Fatal(err)
	}
	if err := mb.Deliver(mailbox.Message{ID: id, From: "Agent-1", To: "human", Priority: mailbox.Normal, Body: "about " + id, CreatedAt: time.Now().UTC()}); err != nil {
		t.Fatal(err)
	}
}

// start runs a watcher until the returned stop, which waits for its end.
func start(w *Watcher) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	return func() { cancel(); <-done }
}

// Every message is told once: not the backlog found at the first look,
// each new one once, and none again by a watcher started anew.
func TestWatcherTellsEachMessageOnceAcrossRestarts(t *testing.T) {
	root := t.TempDir()
	if err := mailbox.Create(root, "human"); err != nil {
		t.Fatal(err)
	}
	told := filepath.Join(t.TempDir(), "told")
	deliver(t, root, "backlog")
	clk := clocktest.New(time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC))
	w := func() *Watcher {
		return &Watcher{Root: root, People: []string{"human"}, Clock: clk,
			Ways: Settings{Command: []string{"sh", "-c", `echo "$AGENTCTL_NOTIFY_ID" >> ` + told}}}
	}
	tells := func(id string) int {
		data, _ := os.ReadFile(told)
		return strings.Count(string(data), id+"\n")
	}
	dir, _ := layout.Notified(root, "human")
	stop := start(w())
	clk.Pump(t, "the backlog recorded", func() bool { _, err := os.Stat(filepath.Join(dir, "backlog.json")); return err == nil })
	deliver(t, root, "m1")
	clk.Pump(t, "m1 told", func() bool { return tells("m1") == 1 })
	stop()
	stop = start(w())
	defer stop()
	deliver(t, root, "m2")
	clk.Pump(t, "m2 told", func() bool { return tells("m2") == 1 })
	deliver(t, root, "m3")
	clk.Pump(t, "m3 told", func() bool { return tells("m3") == 1 })
	if tells("backlog") != 0 || tells("m1") != 1 || tells("m2") != 1 {
		data, _ := os.ReadFile(told)
		t.Errorf("told:\n%s\nwant m1, m2, m3 once each and not the backlog", data)
	}
}

// A way that fails is tried again on the clock, up to Tries, and then
// given up for that message with the error kept in its record; the other
// ways and the next messages go on.
func TestWatcherRetriesAFailingWayThenGivesUp(t *testing.T) {
	root := t.TempDir()
	if err := mailbox.Create(root, "human"); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	hits := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Agentctl-Id")
		mu.Lock()
		hits[id]++
		n := hits[id]
		mu.Unlock()
		if id == "down" || n < 3 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	hit := func(id string) int { mu.Lock(); defer mu.Unlock(); return hits[id] }
	clk := clocktest.New(time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC))
	stop := start(&Watcher{Root: root, People: []string{"human"}, Clock: clk, Tries: 3, Backoff: time.Second,
		Ways: Settings{Webhook: srv.URL}})
	defer stop()
	dir, _ := layout.Notified(root, "human")
	clk.Pump(t, "the first look", func() bool { _, err := os.Stat(dir); return err == nil })
	deliver(t, root, "flaky")
	deliver(t, root, "down")
	rec := func(id string) (r record) {
		data, err := os.ReadFile(filepath.Join(dir, id+".json"))
		if err == nil {
			_ = json.Unmarshal(data, &r)
		}
		return r
	}
	clk.Pump(t, "both recorded", func() bool { return rec("flaky").ID != "" && rec("down").ID != "" })
	if r := rec("flaky"); r.Ways["webhook"] != "ok" || hit("flaky") != 3 {
		t.Errorf("flaky: %+v after %d tries, want ok on the third", r, hit("flaky"))
	}
	if r := rec("down"); !strings.Contains(r.Ways["webhook"], "503") || hit("down") != 3 {
		t.Errorf("down: %+v after %d tries, want the 503 kept after 3", r, hit("down"))
	}
	for range 10 {
		clk.Advance(time.Second)
	}
	deliver(t, root, "next")
	clk.Pump(t, "the next message told", func() bool { return rec("next").ID != "" })
	if hit("down") != 3 {
		t.Errorf("a given-up message was tried again: %d tries", hit("down"))
	}
}
