//go:build linux

package notify

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/agentctl/agentctl/internal/clock/clocktest"
	"github.com/agentctl/agentctl/internal/layout"
	"github.com/agentctl/agentctl/mailbox"
)

// The desktop way asks the session's notification service over D-Bus: a
// real dbus-daemon on a private socket, with a stand-in service on it that
// records each Notify call. Nothing of the message goes in a program's
// arguments.
func TestDesktopNotifiesOverTheSessionBus(t *testing.T) {
	for _, markup := range []bool{false, true} {
		t.Run(fmt.Sprint("markup=", markup), func(t *testing.T) {
			svc := startNotificationService(t, markup)
			m := question
			m.Body = "Merge <main> & tag it?"
			if err := (Settings{Desktop: true}).tell(context.Background(), "desktop", m); err != nil {
				t.Fatal(err)
			}
			got := svc.calls()
			if len(got) != 1 {
				t.Fatalf("the service got %d notifications, want 1", len(got))
			}
			want := notification{App: "agentctl", Summary: title(m), Body: m.Body, Urgency: 2}
			if markup {
				want.Body = "Merge &lt;main&gt; &amp; tag it?"
			}
			if got[0] != want {
				t.Errorf("the service got %+v, want %+v", got[0], want)
			}
		})
	}
}

// With no session bus the telling fails, saying so; none is started.
func TestDesktopWithoutASessionBusFails(t *testing.T) {
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "")
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	err := (Settings{Desktop: true}).tell(context.Background(), "desktop", question)
	if err == nil || !strings.Contains(err.Error(), "no session bus") {
		t.Errorf("a desktop with no bus gave %v", err)
	}
}

type notification struct {
	App, Summary, Body string
	Urgency            byte
}

// notificationService stands in for a desktop's notification daemon
// (org.freedesktop.Notifications) on a real bus.
type notificationService struct {
	markup bool
	mu     sync.Mutex
	got    []notification
}

func (s *notificationService) GetCapabilities() ([]string, *dbus.Error) {
	if s.markup {
		return []string{"body", "body-markup"}, nil
	}
	return []string{"body"}, nil
}

func (s *notificationService) Notify(app string, _ uint32, _, summary, body string, _ []string, hints map[string]dbus.Variant, _ int32) (uint32, *dbus.Error) {
	u, _ := hints["urgency"].Value().(byte)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, notification{App: app, Summary: summary, Body: body, Urgency: u})
	return uint32(len(s.got)), nil
}

func (s *notificationService) calls() []notification {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.got)
}

// startNotificationService starts a session bus of the test's own and the
// stand-in service on it, and points DBUS_SESSION_BUS_ADDRESS at the bus.
func startNotificationService(t *testing.T, markup bool) *notificationService {
	t.Helper()
	daemon, err := exec.LookPath("dbus-daemon")
	if err != nil {
		t.Fatal("the desktop tests need dbus-daemon (scripts/setup installs it): ", err)
	}
	// Not under t.TempDir(): a subtest's name would put "=" in the
	// address, and a socket's path must stay short.
	dir, err := os.MkdirTemp("", "bus")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	addr := "unix:path=" + filepath.Join(dir, "bus")
	cmd := exec.Command(daemon, "--session", "--nofork", "--nopidfile", "--address="+addr, "--print-address=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	// The daemon prints its address once it listens.
	if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
		t.Fatal("dbus-daemon did not start: ", err)
	}
	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	svc := &notificationService{markup: markup}
	if err := conn.Export(svc, "/org/freedesktop/Notifications", "org.freedesktop.Notifications"); err != nil {
		t.Fatal(err)
	}
	if reply, err := conn.RequestName("org.freedesktop.Notifications", dbus.NameFlagDoNotQueue); err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("cannot own the notification service's name: %v %v", reply, err)
	}
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", addr)
	return svc
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
