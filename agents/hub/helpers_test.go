package hub

import (
	"context"
	"errors"
	neturl "net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/agentctl/agentctl/agents/hub/hubconf"
	"github.com/agentctl/agentctl/agents/hub/hubserver"
	"github.com/agentctl/agentctl/cursor"
	"github.com/agentctl/agentctl/internal/testenv/poll"
	"github.com/agentctl/agentctl/internal/testenv/syncbuf"
)

// testServer starts an embedded server with its store in a fresh folder.
func testServer(t *testing.T, listen, store string) *hubserver.Server {
	t.Helper()
	srv, err := startServer(hubconf.Settings{Name: "test", Listen: listen, StoreDir: store})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	return srv
}

// testConn connects to url with the streams in place.
func testConn(t *testing.T, url string) *nats.Conn {
	t.Helper()
	ctx, cancel := poll.Context(t)
	defer cancel()
	nc, err := Connect(ctx, ClientSettings{URLs: []string{url}, Name: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if err := EnsureStreams(ctx, js, 1, nil); err != nil {
		t.Fatal(err)
	}
	return nc
}

// chat stands in for an agent's chat window as a seat's driver sees it:
// a prompt sent is sent (counted per turn), and its reply can be read back
// by a later Run that resumes the turn. Replies wait for a token on gate,
// so a test decides when the model has finished.
type chat struct {
	gate chan struct{}
	fail error
	// failEarly fails a turn before the prompt goes out, as a missing
	// window or a model API that refuses does.
	failEarly error
	// finishOnStop keeps a turn waiting for its gate after its context
	// ends, telling stopSeen, as a driver that has the reply as the seat
	// stops.
	finishOnStop bool
	stopSeen     chan struct{}
	// bigReply, when set, is the size of every reply, in bytes.
	bigReply int
	// pressedOnly: a turn tells only that the send key was pressed, as a
	// chat window's whose proof of the submission has not come.
	pressedOnly bool
	// afterPress, if set, runs once the turn has told its stage, whatever
	// came of that.
	afterPress func()

	mu      sync.Mutex
	sent    map[string]int
	resumes map[string]int
	running chan string // each Run's turn, as it starts waiting
}

func newChat() *chat {
	return &chat{gate: make(chan struct{}, 16), sent: map[string]int{}, resumes: map[string]int{}, running: make(chan string, 16), stopSeen: make(chan struct{}, 1)}
}

func (c *chat) Run(ctx context.Context, t cursor.Turn) (string, error) {
	c.mu.Lock()
	if early := c.failEarly; early != nil && !t.Resume {
		c.mu.Unlock()
		return "", early
	}
	finishOnStop, stage, afterPress := c.finishOnStop, cursor.StageSubmitted, c.afterPress
	if c.pressedOnly {
		stage = cursor.StagePressed
	}
	if t.Resume {
		c.resumes[t.ID]++
	} else {
		c.sent[t.ID]++
	}
	c.mu.Unlock()
	if !t.Resume && t.OnStage != nil {
		err := t.OnStage(stage)
		if afterPress != nil {
			afterPress()
		}
		if err != nil {
			return "", err
		}
	}
	c.running <- t.ID
	select {
	case <-ctx.Done():
		if !finishOnStop {
			return "", ctx.Err()
		}
		c.stopSeen <- struct{}{}
		<-c.gate
	case <-c.gate:
	}
	c.mu.Lock()
	fail := c.fail
	c.mu.Unlock()
	if t.OnUsage != nil {
		t.OnUsage(cursor.Usage{InputTokens: int64(len(t.Prompt)), OutputTokens: 7, CostUSD: 0.25, Model: "chat-1"})
	}
	if fail != nil {
		return "", fail
	}
	c.mu.Lock()
	big := c.bigReply
	c.mu.Unlock()
	if big > 0 {
		return strings.Repeat("x", big), nil
	}
	return "reply to " + t.Prompt, nil
}

// failWith makes the chat's turns fail with err from now on.
func (c *chat) failWith(err error) { c.set(func(c *chat) { c.fail = err }) }

// set changes how the chat behaves from its next turn on.
func (c *chat) set(change func(c *chat)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	change(c)
}

func (c *chat) counts(turn string) (sent, resumed int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sent[turn], c.resumes[turn]
}

// waitRunning waits until the chat has a turn waiting for its reply; a
// turn that never reaches it hangs the test until -timeout.
func (c *chat) waitRunning(t *testing.T) string {
	t.Helper()
	return <-c.running
}

// startSeat runs a seat until the returned stop is called, which waits for
// it to end.
func startSeat(t *testing.T, nc *nats.Conn, d cursor.Driver, journal string) (stop func()) {
	t.Helper()
	ask, wait := startSeatWith(t, nc, d, journal, 0)
	return func() { ask(); wait() }
}

// startSeatWith is startSeat with a shutdown grace, its stop in two: ask
// asks the seat to stop, and wait waits until it has.
func startSeatWith(t *testing.T, nc *nats.Conn, d cursor.Driver, journal string, grace time.Duration) (ask, wait func()) {
	t.Helper()
	j, err := OpenJournal(journal)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- RunSeat(ctx, SeatSettings{Agent: "Agent-5", Machine: "desk-2", Driver: d, Journal: j, Conn: nc, Beat: 50 * time.Millisecond, Grace: grace,
			Log: zerolog.New(syncbuf.OnFailure(t, "the seat's log")).With().Timestamp().Logger()})
	}()
	var once sync.Once
	wait = func() {
		once.Do(func() {
			if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("seat: %v", err)
			}
		})
	}
	t.Cleanup(func() { cancel(); wait() })
	return cancel, wait
}

// ask runs a hub-side turn in the background.
type asked struct {
	reply string
	err   error
}

func askTurn(ctx context.Context, d *Driver, turn cursor.Turn) <-chan asked {
	out := make(chan asked, 1)
	go func() {
		r, err := d.Run(ctx, turn)
		out <- asked{r, err}
	}()
	return out
}

// result is the answer the hub got; one that never comes hangs the test
// until -timeout.
func result(t *testing.T, ch <-chan asked) asked {
	t.Helper()
	return <-ch
}

// hostPort is the host:port of a nats:// URL.
func hostPort(t *testing.T, url string) string {
	t.Helper()
	u, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// rig is a hub's driver and a seat on one embedded server, the seat
// taking its turns in a chat.
type rig struct {
	srv      *hubserver.Server
	url      string
	store    string
	journal  string
	chat     *chat
	driver   *Driver
	stopSeat func()
}

func newRig(t *testing.T) *rig {
	t.Helper()
	dir := t.TempDir()
	r := &rig{store: filepath.Join(dir, "store"), journal: filepath.Join(dir, "seat"), chat: newChat()}
	r.srv = testServer(t, "127.0.0.1:0", r.store)
	r.url = r.srv.ClientURL()
	r.stopSeat = r.startSeat(t)
	r.driver = r.newDriver(t, testConn(t, r.url))
	return r
}

// startSeat starts a seat (again) on the rig's journal and chat.
func (r *rig) startSeat(t *testing.T) (stop func()) {
	return startSeat(t, testConn(t, r.url), r.chat, r.journal)
}

// newDriver is the hub's side of the seat on nc: a hub (re)started.
func (r *rig) newDriver(t *testing.T, nc *nats.Conn) *Driver {
	t.Helper()
	d, err := NewDriver(context.Background(), nc, "Agent-5", zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	return d
}
