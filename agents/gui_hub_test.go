//go:build linux && !nogui

package agents

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/agentctl/agentctl/agents/hub"
	"github.com/agentctl/agentctl/agents/hub/hubconf"
	"github.com/agentctl/agentctl/agents/hub/hubserver"
	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/cursor"
	"github.com/agentctl/agentctl/internal/atomicfile"
	"github.com/agentctl/agentctl/internal/testenv/poll"
	"github.com/agentctl/agentctl/mailbox"
)

func init() { roles["gui-seat"] = guiSeatProcess }

// guiSeatProcess is Agent-3's seat on a machine of its own: the GUI driver
// on the stand-in window (AGENTS_WINDOW), its journal under the seat
// machine's runtime folder (AGENTS_ROOT), its turns from the hub at
// AGENTS_HUB.
func guiSeatProcess() int {
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "gui-seat:", err)
		return 1
	}
	var w config.Window
	if err := json.Unmarshal([]byte(os.Getenv("AGENTS_WINDOW")), &w); err != nil {
		return fail(err)
	}
	root, agent := os.Getenv("AGENTS_ROOT"), os.Getenv("AGENTS_AGENT")
	g, err := newTestGUI(w, root, roleSubmitWait())
	if err != nil {
		return fail(err)
	}
	defer g.Close()
	var d cursor.Driver = g
	if stage := os.Getenv("AGENTS_HOLD_AT"); stage != "" {
		d = holdAt{g, cursor.Stage(stage)}
	}
	dir, err := hub.JournalDir(root, agent)
	if err != nil {
		return fail(err)
	}
	j, err := hub.OpenJournal(dir)
	if err != nil {
		return fail(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := testLog()
	nc, err := hub.Connect(ctx, hub.ClientSettings{URLs: []string{os.Getenv("AGENTS_HUB")}, Name: "gui-seat " + agent, Log: log})
	if err != nil {
		return fail(err)
	}
	defer nc.Close()
	err = hub.RunSeat(ctx, hub.SeatSettings{Agent: agent, Machine: "seat-machine", Driver: d, Journal: j, Conn: nc, Beat: 200 * time.Millisecond, Log: log})
	if err != nil {
		return fail(err)
	}
	return 0
}

// holdAt is a driver whose turn stops for good once its journal recorded
// stage, so that the test kills the seat exactly there, however soon the
// driver would go on (it records the next stage some 10 ms later).
type holdAt struct {
	cursor.Driver
	stage cursor.Stage
}

func (h holdAt) Run(ctx context.Context, t cursor.Turn) (string, error) {
	record := t.OnStage
	t.OnStage = func(s cursor.Stage) error {
		if record != nil {
			if err := record(s); err != nil {
				return err
			}
		}
		if s == h.stage {
			<-ctx.Done()
			return ctx.Err()
		}
		return nil
	}
	return h.Driver.Run(ctx, t)
}

// TestGUIHubSeatKilledMidTurnResumes kills a real seat process, driving a
// real chat window over a real X display, with SIGKILL mid-turn, and
// starts another seat: once while the model is still thinking, right
// after its journal recorded the prompt as submitted, and once between
// the send key and its proof (the window took the key, and then is stuck
// for a while). The hub's runner must archive the message with the
// window's reply, and the window must receive exactly one paste and one
// prompt.
func TestGUIHubSeatKilledMidTurnResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a private X display")
	}
	usePrivateDisplay(t)
	t.Run("after submitted", func(t *testing.T) {
		h := newGUIHub(t, 20)
		first := h.startSeat(t, string(cursor.StageSubmitted))
		h.deliver(t)
		h.waitJournal(t, string(cursor.StageSubmitted))
		first.Process.Signal(syscall.SIGKILL)
		first.Wait()
		h.startSeat(t, "")
		h.check(t)
	})
	t.Run("between the key and its proof", func(t *testing.T) {
		h := newGUIHub(t, 440, "--frozen-submit", "10")
		first := h.startSeat(t, "")
		h.deliver(t)
		poll.Until(t, "the window to take the prompt", func() bool {
			data, _ := os.ReadFile(h.windowLog)
			return strings.Contains(string(data), `"event": "prompt"`)
		})
		first.Process.Signal(syscall.SIGKILL)
		first.Wait()
		dir, err := hub.JournalDir(h.seatRoot, "Agent-3")
		if err != nil {
			t.Fatal(err)
		}
		if got := journalStage(dir); got != stagePressed {
			t.Fatalf("the seat's journal says %s at the kill, want %s: the test missed the moment", got, stagePressed)
		}
		h.startSeat(t, "")
		h.check(t)
	})
	// The hub's own side goes away instead: its server stops while the
	// model thinks, the seat reads the reply with nobody to tell, and the
	// server comes back on the same store and port.
	t.Run("server restarted", func(t *testing.T) {
		h := newGUIHub(t, 860)
		h.startSeat(t, "")
		h.deliver(t)
		h.waitJournal(t, string(cursor.StageSubmitted))
		h.srv.Shutdown()
		h.waitJournal(t, "answered")
		h.srv = startHubServer(t, h.listen, h.store)
		h.check(t)
	})
}

// guiHub is a hub (embedded server, Agent-3's runner with the hub's
// driver) in the test process, and a seat machine's runtime folder and
// stand-in chat window for seat processes.
type guiHub struct {
	root, seatRoot string
	store, listen  string
	srv            *hubserver.Server
	url            string
	window         config.Window
	windowLog      string
	reply          string
}

// newGUIHub starts the hub and a stand-in window at x with chatwindow.py's
// options besides these.
func newGUIHub(t *testing.T, x int, window ...string) *guiHub {
	t.Helper()
	h := &guiHub{root: newRuntime(t, demoAgents), seatRoot: t.TempDir(), store: filepath.Join(t.TempDir(), "jetstream"),
		reply: filepath.Join(repoRoot(), "fixtures", "demo", "replies", "Agent-3.md")}
	// The model thinks for 2 s: long enough to act mid-turn.
	h.window, h.windowLog = startWindow(t, "Agent-3", x, append([]string{"--reply-file", h.reply, "--think", "2", "--chunks", "3", "--pause", "0.2"}, window...)...)
	h.srv = startHubServer(t, "127.0.0.1:0", h.store)
	h.url = h.srv.ClientURL()
	u, err := url.Parse(h.url)
	if err != nil {
		t.Fatal(err)
	}
	h.listen = u.Host

	ctx, cancel := poll.Context(t)
	defer cancel()
	nc, err := hub.Connect(ctx, hub.ClientSettings{URLs: []string{h.url}, Name: "hub " + t.Name(), Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if err := hub.EnsureStreams(ctx, js, 1, nil); err != nil {
		t.Fatal(err)
	}
	d, err := hub.NewDriver(ctx, nc, "Agent-3", zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	s := testSettings(h.root, "Agent-3", demoAgents, d)
	s.Resend = false // as for any GUI agent
	s.Log = logOnFailure(t)
	startRunner(t, s)
	return h
}

// startHubServer starts an embedded server; it is shut down when the test
// ends (again, when the test shut it down already).
func startHubServer(t *testing.T, listen, store string) *hubserver.Server {
	t.Helper()
	srv, err := hubserver.StartServer(hubconf.Settings{Name: "hub", Listen: listen, StoreDir: store}, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	return srv
}

// startSeat starts a seat process; it is stopped when the test ends.
// startSeat starts a seat process; with hold, its turn stops for good once
// the journal recorded that stage (see holdAt).
func (h *guiHub) startSeat(t *testing.T, hold string) *exec.Cmd {
	t.Helper()
	calibration, err := json.Marshal(h.window)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "AGENTS_TEST_ROLE=gui-seat", "AGENTS_ROOT="+h.seatRoot, "AGENTS_AGENT=Agent-3",
		"AGENTS_WINDOW="+string(calibration), "AGENTS_HUB="+h.url, "AGENTS_HOLD_AT="+hold, "AGENTS_SUBMIT_WAIT=60s")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() })
	return cmd
}

func (h *guiHub) deliver(t *testing.T) {
	t.Helper()
	deliverTo(t, h.root, mailbox.Message{ID: "hub-resume-1", From: "Agent-2", To: "Agent-3", Type: "message", Body: "Say hello."})
}

// waitJournal waits until the seat's journal records its turn at stage,
// and fails at once when the turn went past it unseen.
func (h *guiHub) waitJournal(t *testing.T, stage string) {
	t.Helper()
	order := []string{"received", "started", stagePressed, string(cursor.StageSubmitted), "answered"}
	rank := func(s string) int {
		for i, o := range order {
			if o == s {
				return i
			}
		}
		return -1
	}
	dir, err := hub.JournalDir(h.seatRoot, "Agent-3")
	if err != nil {
		t.Fatal(err)
	}
	poll.Until(t, "the seat's journal to record "+stage, func() bool {
		got := journalStage(dir)
		if rank(got) > rank(stage) && stage != "answered" {
			t.Fatalf("the seat's journal went past %s unseen (it says %s)", stage, got)
		}
		return got == stage
	})
}

// journalStage is the stage of the one turn in the journal at dir, "" when
// there is none yet: its file's last line, each step appending one.
func journalStage(dir string) string {
	names, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	for _, name := range names {
		if strings.HasPrefix(filepath.Base(name), atomicfile.TempPrefix) {
			continue
		}
		data, err := os.ReadFile(name)
		if err != nil {
			continue
		}
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		var e struct {
			Stage string `json:"stage"`
		}
		if json.Unmarshal([]byte(lines[len(lines)-1]), &e) == nil {
			return e.Stage
		}
	}
	return ""
}

// check waits for the message to be archived on the hub and checks that it
// carries the window's reply and that the window received one prompt.
func (h *guiHub) check(t *testing.T) {
	t.Helper()
	// A paste into a chat still busy with the first is not sent (the
	// window ignores Enter, as Cursor does) but is a paste all the same.
	pastes := func() ([]byte, int, int) {
		data, _ := os.ReadFile(h.windowLog)
		return data, len(regexp.MustCompile(`"event": "paste"`).FindAll(data, -1)), len(regexp.MustCompile(`"event": "prompt"`).FindAll(data, -1))
	}
	poll.Until(t, "the message to be archived on the hub", func() bool {
		if data, pasted, sent := pastes(); pasted > 1 || sent > 1 { // no need to wait for what comes of it
			t.Fatalf("the window received %d pastes and %d prompts, want 1 of each:\n%s", pasted, sent, data)
		}
		return counts(t, h.root, "Agent-3").Done == 1
	})
	data, pasted, sent := pastes()
	if pasted != 1 || sent != 1 {
		t.Fatalf("the window received %d pastes and %d prompts, want 1 of each:\n%s", pasted, sent, data)
	}
	if !strings.Contains(string(data), "Say hello.") {
		t.Errorf("the window's prompt does not carry the message:\n%s", data)
	}
	mb, err := mailbox.Open(h.root, "Agent-3")
	if err != nil {
		t.Fatal(err)
	}
	done, err := mb.List(mailbox.StateDone)
	if err != nil || len(done) != 1 || done[0].Receipt == nil {
		t.Fatalf("archive: %+v, %v", done, err)
	}
	want, _ := os.ReadFile(h.reply)
	if got := done[0].Receipt.Reply; got != string(want) {
		t.Errorf("reply on the hub after the seat's restart:\n%q\nwant the window's reply:\n%q", got, want)
	}
}
