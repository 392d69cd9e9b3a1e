package cursor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	acp "github.com/coder/acp-go-sdk"
)

// ACP is the driver for agents that speak the Agent Client Protocol: the
// seat starts the agent once as its child and keeps it for every turn,
// with one session per agent (kept in the conversation record, loaded
// again after a restart where the agent can), and each turn is one
// session/prompt whose reply is the text the agent streamed for it.
type ACP struct {
	s       ACPSettings
	dir     string // absolute
	timeout time.Duration

	// mu guards the child and its connection against Close.
	mu      sync.Mutex
	child   *acpChild
	conn    *acp.ClientSideConnection
	caps    acp.AgentCapabilities
	session string // the session open in this child
	// stale says the child took a cancel: it is started afresh, and the
	// session loaded, before the next turn (see prompt).
	stale bool
	// turn is the turn under way, for the agent's calls.
	turn atomic.Pointer[acpTurn]
	// idleUpdate is when the agent last sent an update outside a turn
	// (UnixNano): the history session/load replays.
	idleUpdate atomic.Int64
}

// How long the agent may take to start and open a session, and to stop a
// cancelled turn before it is killed.
const (
	acpStartTimeout = 2 * time.Minute
	acpCancelWait   = 30 * time.Second
)

// A loaded session's history may still stream in after session/load
// answered (Gemini CLI replays it without waiting): the prompt waits
// until none came for acpReplayQuiet, at most acpReplayWait, so that no
// replayed word is taken for the reply. It is paid once an agent start,
// and long enough for a replay starved of CPU on a busy machine; one
// that pauses longer still fails the turn (errReplayInTurn) rather than
// have its words taken for the reply.
var (
	acpReplayQuiet = time.Second
	acpReplayWait  = 30 * time.Second
)

// awaitReplay waits for the replay of a loaded session to end.
func (d *ACP) awaitReplay(ctx context.Context) {
	deadline := time.Now().Add(acpReplayWait)
	for time.Now().Before(deadline) {
		quiet := time.Since(time.Unix(0, d.idleUpdate.Load()))
		if quiet >= acpReplayQuiet {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(acpReplayQuiet - quiet):
		}
	}
}

// NewACP checks the settings and returns the driver; the agent starts
// with the first turn.
func NewACP(s ACPSettings) (*ACP, error) {
	if len(s.Command) == 0 || s.Command[0] == "" {
		return nil, errors.New("acp driver: no command configured")
	}
	dir := s.Dir
	if dir == "" {
		dir = "."
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("acp driver: cannot make %s absolute: %w", dir, err)
	}
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = DefaultExecTimeout
	}
	return &ACP{s: s, dir: abs, timeout: timeout}, nil
}

// acpKind is the conversation record's kind of an ACP seat: a session of
// one agent means nothing to another.
func acpKind(s ACPSettings) string {
	if s.Preset == "" {
		return "acp"
	}
	return "acp-" + s.Preset
}

// Close ends the agent and everything it spawned.
func (d *ACP) Close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.drop()
}

// drop ends the child, if any; the next turn starts another.
func (d *ACP) drop() {
	if d.child != nil {
		d.child.stop()
	}
	d.child, d.conn, d.session = nil, nil, ""
}

// kill ends a child that no longer answers.
func (d *ACP) kill() {
	if d.child != nil {
		d.child.kill()
	}
	d.child, d.conn, d.session = nil, nil, ""
}

// Run sends the prompt in the agent's session and returns the text the
// agent streamed for it, exactly, once the agent ends the turn.
func (d *ACP) Run(ctx context.Context, t Turn) (string, error) {
	if t.Resume {
		if t.ResumeState == acpCancelled {
			return "", fmt.Errorf("%w when its runner stopped (session/cancel): its session holds the prompt, with no reply", ErrPromptStopped)
		}
		return "", fmt.Errorf("%w: the ACP agent ended with the runner that sent the prompt, and the protocol cannot read back a reply; sending the prompt again would put it into the session twice", ErrReplyLost)
	}
	ctx, cancel := context.WithTimeoutCause(ctx, d.timeout, fmt.Errorf("%w after %s", ErrExecTimeout, d.timeout))
	defer cancel()
	conn, err := d.ensure(ctx, t)
	if err != nil {
		return "", err
	}
	session, loaded, err := d.open(ctx, conn, t)
	if err != nil {
		return "", err
	}
	if t.OnSession != nil {
		t.OnSession(session)
	}
	at := &acpTurn{t: t, ctx: ctx, session: session, afterLoad: loaded}
	d.turn.Store(at)
	defer d.turn.Store(nil)
	if t.OnStart != nil {
		if err := t.OnStart(d.child.child); err != nil {
			return "", fmt.Errorf("turn stopped before the prompt was sent: %w", err)
		}
	}
	for _, s := range []Stage{StageInjected, StageSubmitted} {
		if err := t.stage(s); err != nil {
			return "", err
		}
	}
	resp, err := d.prompt(ctx, conn, session, t.Prompt)
	if errors.Is(err, errStoppedByAgent) && !errors.Is(context.Cause(ctx), ErrAbandoned) && t.OnResumeState != nil {
		if serr := t.OnResumeState(acpCancelled); serr != nil {
			return "", errors.Join(err, serr)
		}
	}
	if err != nil {
		return "", err
	}
	stop := resp.StopReason
	if u := resp.Usage; u != nil && t.OnUsage != nil {
		t.OnUsage(acpUsage(*u))
	}
	at.mu.Lock()
	reply, failed, refused := at.reply.String(), at.failed, at.refused
	at.mu.Unlock()
	if failed != nil {
		return "", fmt.Errorf("%w: %v", ErrExecFailed, failed)
	}
	if err := stopError(stop); err != nil {
		if len(refused) > 0 {
			err = fmt.Errorf("%w, after it was refused to run %q", err, refused)
		}
		return "", err
	}
	if reply == "" {
		return "", fmt.Errorf("%w: the agent ended the turn without a word of reply", ErrNoReply)
	}
	if err := t.stage(StageReplied); err != nil {
		return "", err
	}
	return reply, nil
}

// errStoppedByAgent: the agent answered session/cancel by stopping the
// prompt, so none of it was answered.
var errStoppedByAgent = errors.New("the agent stopped the prompt")

// acpCancelled is the resume state of a turn whose prompt the agent
// stopped when its runner stopped: the next runner may send it again.
const acpCancelled = "acp: prompt stopped by session/cancel"

// stopError says why a turn the agent stopped gave no reply to pass on.
func stopError(r acp.StopReason) error {
	switch r {
	case acp.StopReasonEndTurn:
		return nil
	case acp.StopReasonMaxTokens:
		return fmt.Errorf("%w: the agent stopped at its token limit (max_tokens); its reply is cut short and is not passed on", ErrExecFailed)
	case acp.StopReasonMaxTurnRequests:
		return fmt.Errorf("%w: the agent stopped at its limit of model requests for one turn (max_turn_requests); its reply is not passed on", ErrExecFailed)
	case acp.StopReasonRefusal:
		return fmt.Errorf("%w: the agent refused the prompt (refusal)", ErrExecFailed)
	case acp.StopReasonCancelled:
		return fmt.Errorf("%w: the agent cancelled the turn itself", ErrExecFailed)
	}
	return fmt.Errorf("%w: the agent ended the turn for a reason the protocol does not name (%q)", ErrExecFailed, r)
}

// prompt sends the prompt and waits for the agent to end the turn. When
// ctx ends first (a person skipped the turn, the runner stops, the turn
// timed out) the agent is asked to cancel (session/cancel) and waited
// for; one that does not stop in time is killed.
func (d *ACP) prompt(ctx context.Context, conn *acp.ClientSideConnection, session, text string) (acp.PromptResponse, error) {
	type answer struct {
		resp acp.PromptResponse
		err  error
	}
	pctx, abandon := context.WithCancel(context.WithoutCancel(ctx))
	defer abandon()
	done := make(chan answer, 1)
	go func() {
		r, err := conn.Prompt(pctx, acp.PromptRequest{SessionId: acp.SessionId(session), Prompt: []acp.ContentBlock{acp.TextBlock(text)}})
		done <- answer{r, err}
	}()
	var a answer
	select {
	case a = <-done:
	case <-ctx.Done():
		why := context.Cause(ctx)
		// Sent aside: an agent that reads nothing any more could block the
		// write, and the wait below must still end.
		go conn.Cancel(context.WithoutCancel(ctx), acp.CancelNotification{SessionId: acp.SessionId(session)})
		select {
		case a = <-done:
		case <-time.After(acpCancelWait):
			d.fail()
			return acp.PromptResponse{}, fmt.Errorf("turn stopped (%w); the agent did not stop within %s of session/cancel and was ended", why, acpCancelWait)
		}
		if a.err == nil {
			// Claude's adapter answers the prompt after a cancel at once,
			// with nothing, and its reply later, in the turn after: an agent
			// that can load its session is started afresh instead.
			d.mu.Lock()
			d.stale = d.caps.LoadSession
			d.mu.Unlock()
			if a.resp.StopReason != acp.StopReasonCancelled {
				// It ended the turn as the cancel went out: its reply may be
				// whole, but this turn no longer waits for it.
				return acp.PromptResponse{}, fmt.Errorf("turn stopped (%w); the agent ended the prompt (%s) as it was stopped", why, a.resp.StopReason)
			}
			return acp.PromptResponse{}, fmt.Errorf("turn stopped (%w); %w (%s)", why, errStoppedByAgent, a.resp.StopReason)
		}
	}
	if a.err != nil {
		if disconnected(conn) && d.childDead() {
			why := d.failWhy()
			return acp.PromptResponse{}, fmt.Errorf("%w: the ACP agent %s ended during the turn: %s", ErrExecFailed, d.s.Command[0], why)
		}
		if ctx.Err() != nil {
			return acp.PromptResponse{}, fmt.Errorf("turn stopped (%w): %v", context.Cause(ctx), a.err)
		}
		return acp.PromptResponse{}, fmt.Errorf("%w: %s answered the prompt with an error: %v", ErrExecFailed, d.s.Command[0], a.err)
	}
	return a.resp, nil
}

// acpUsage is the turn's usage as the agent reported it (the protocol's
// unstable usage field of the prompt's answer).
func acpUsage(u acp.Usage) Usage {
	out := Usage{InputTokens: int64(u.InputTokens), OutputTokens: int64(u.OutputTokens)}
	if u.CachedReadTokens != nil {
		out.CacheReadTokens = int64(*u.CachedReadTokens)
	}
	if u.CachedWriteTokens != nil {
		out.CacheWriteTokens = int64(*u.CachedWriteTokens)
	}
	return out
}

// disconnected reports whether the agent's side of the connection closed,
// rather than the agent answering with an error.
func disconnected(conn *acp.ClientSideConnection) bool {
	select {
	case <-conn.Done():
		return true
	default:
		return false
	}
}

// childDead reports whether the agent ended, waiting a moment for its end
// to be seen: a connection that broke was usually a process that died.
func (d *ACP) childDead() bool {
	d.mu.Lock()
	c := d.child
	d.mu.Unlock()
	if c == nil {
		return true
	}
	select {
	case <-c.exited:
		return true
	case <-time.After(waitAfterKill):
		return false
	}
}

// failWhy ends what is left of the child and says how it ended.
func (d *ACP) failWhy() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	why := "it is gone"
	if d.child != nil {
		why = d.child.why()
	}
	d.drop()
	return why
}

// fail ends the child after a turn that left it in an unknown state.
func (d *ACP) fail() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.kill()
}

// ensure starts the agent and initializes the connection, unless a live
// one is there.
func (d *ACP) ensure(ctx context.Context, t Turn) (*acp.ClientSideConnection, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.child != nil && d.child.alive() && !d.stale {
		return d.conn, nil
	}
	if d.stale {
		d.stale = false
		d.drop()
	}
	if d.child != nil {
		t.note("the ACP agent %s had ended (%s); it was started again", d.s.Command[0], d.child.why())
		d.drop()
	}
	c, err := startACPChild(d.s.Command, d.dir, d.s.Env)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrExecFailed, err)
	}
	conn := acp.NewClientSideConnection(acpClient{d: d}, c.stdin, c.stdout)
	conn.SetLogger(slog.New(slog.DiscardHandler))
	ictx, cancel := context.WithTimeout(ctx, acpStartTimeout)
	defer cancel()
	resp, err := conn.Initialize(ictx, acp.InitializeRequest{
		ProtocolVersion: acp.ProtocolVersionNumber,
		ClientInfo:      &acp.Implementation{Name: "agentctl", Version: "1"},
		// Only what the driver serves: files inside the seat's folder.
		ClientCapabilities: acp.ClientCapabilities{Fs: acp.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}},
	})
	if err == nil && resp.ProtocolVersion != acp.ProtocolVersionNumber {
		err = fmt.Errorf("it speaks protocol version %d, not %d", resp.ProtocolVersion, acp.ProtocolVersionNumber)
	}
	if err != nil {
		c.kill()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("turn stopped while the ACP agent %s started: %w", d.s.Command[0], context.Cause(ctx))
		}
		return nil, fmt.Errorf("%w: cannot initialize the ACP agent %s: %v%s", ErrExecFailed, d.s.Command[0], err, c.stderr.quote())
	}
	d.child, d.conn, d.caps, d.session = c, conn, resp.AgentCapabilities, ""
	return conn, nil
}

// open returns the session the turn goes to: the one the conversation
// record names (t.Session), loaded into a fresh agent where it can be
// (loaded), or a new one.
func (d *ACP) open(ctx context.Context, conn *acp.ClientSideConnection, t Turn) (id string, loaded bool, err error) {
	want := t.Session
	if t.NewChat {
		want = ""
	}
	if want != "" && want == d.session {
		return want, false, nil
	}
	octx, cancel := context.WithTimeout(ctx, acpStartTimeout)
	defer cancel()
	if want != "" {
		if !d.caps.LoadSession {
			t.note("the ACP agent %s cannot load a session (it offers no loadSession), so session %s was left and a new one began without the conversation so far", d.s.Command[0], want)
		} else {
			resp, err := conn.LoadSession(octx, acp.LoadSessionRequest{SessionId: acp.SessionId(want), Cwd: d.dir, McpServers: []acp.McpServer{}})
			if err == nil {
				d.idleUpdate.Store(time.Now().UnixNano())
				d.awaitReplay(octx)
				d.session = want
				if err := d.chooseModel(octx, conn, want, resp.Models, resp.ConfigOptions); err != nil {
					return "", false, err
				}
				return want, true, nil
			}
			if ctx.Err() != nil {
				return "", false, fmt.Errorf("turn stopped while session %s loaded: %w", want, context.Cause(ctx))
			}
			t.note("the ACP agent %s could not load session %s (%v), so a new one began without the conversation so far", d.s.Command[0], want, err)
		}
	}
	resp, err := conn.NewSession(octx, acp.NewSessionRequest{Cwd: d.dir, McpServers: []acp.McpServer{}})
	if err != nil && ctx.Err() != nil {
		return "", false, fmt.Errorf("turn stopped while a session opened: %w", context.Cause(ctx))
	}
	if err != nil {
		return "", false, fmt.Errorf("%w: the ACP agent %s cannot open a session: %v%s", ErrExecFailed, d.s.Command[0], err, d.child.stderr.quote())
	}
	id = string(resp.SessionId)
	d.session = id
	if err := d.chooseModel(octx, conn, id, resp.Models, resp.ConfigOptions); err != nil {
		return "", false, err
	}
	return id, false, nil
}
