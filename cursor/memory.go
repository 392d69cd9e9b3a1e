package cursor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/agentctl/agentctl/internal/atomicfile"
	"github.com/agentctl/agentctl/internal/clock"
	"github.com/agentctl/agentctl/internal/layout"
)

// SessionsDir is the folder of a runtime root where each agent's
// conversation record lives.
func SessionsDir(root string) string { return layout.Sessions(root) }

// SessionFile is where an agent's conversation is recorded: <agent>.json.
// The name must already be a valid agent name; an invalid one panics
// rather than name a file outside the folder.
func SessionFile(sessions, agent string) string {
	return layout.MustPath(layout.SessionFile(sessions, agent))
}

// RawOutputDir is where the exec driver keeps what an agent's command
// printed in a turn that gave no reply. The name must be valid, as for
// SessionFile.
func RawOutputDir(sessions, agent string) string {
	return layout.MustPath(layout.RawOutput(sessions, agent))
}

// kindGUI is the kind of a chat window's conversation; an exec agent's is
// its preset's name.
const kindGUI = "gui"

// maxPrevious bounds how many ended conversations a record remembers.
const maxPrevious = 50

// conversation is an agent's record of its current conversation, the
// content of its session file.
type conversation struct {
	Agent string `json:"agent"`
	// Kind is "gui" or the exec preset: a session of one tool means nothing
	// to another.
	Kind string `json:"kind"`
	// SessionID is what an exec preset's command continues with --resume.
	SessionID string `json:"session_id,omitempty"`
	// Thread is the thread of the last turn.
	Thread    string    `json:"thread,omitempty"`
	Turns     int       `json:"turns"`
	StartedAt time.Time `json:"started_at"`
	UpdatedAt time.Time `json:"updated_at"`
	// Why the conversation started afresh.
	Why string `json:"why,omitempty"`
	// Unanswered counts the attempts that reached the agent's command in
	// this session and got no reply, where the tool cannot fork a session
	// (Memory.Forks): their prompts stay in the session, and the next turn
	// continues it with them, says so in a note.
	Unanswered int     `json:"unanswered,omitempty"`
	Previous   []ended `json:"previous,omitempty"`
}

// ended is a conversation the agent left, so that a person can go back to
// it (claude --resume ID).
type ended struct {
	SessionID string    `json:"session_id,omitempty"`
	Turns     int       `json:"turns"`
	StartedAt time.Time `json:"started_at"`
	EndedAt   time.Time `json:"ended_at"`
}

// Memory is how Remember keeps an agent's conversation between turns.
type Memory struct {
	Agent string
	// Path is the agent's session file (SessionFile).
	Path string
	// Kind is "gui" or the exec preset.
	Kind   string
	Policy NewChatPolicy
	// Forks says the exec preset's command forks the session each turn
	// continues, so that a failed attempt leaves the recorded one as it
	// was.
	Forks bool
	// Fresh starts the first turn sent in a new conversation (agentctl
	// run --new-session).
	Fresh bool
	// Clock stamps the record; clock.System when nil.
	Clock clock.Clock
	// Warn gets what goes wrong without stopping a turn: a record that
	// could not be read or saved.
	Warn func(error)
}

// remembering is a Driver whose turns continue one conversation per agent.
type remembering struct {
	d Driver
	m Memory
}

// Remember wraps d so that its turns continue the agent's conversation
// recorded at m.Path (an exec preset's session), start a fresh one when
// m.Policy or m.Fresh says so, and record each turn that got its reply,
// so that the next runner carries on where this one stopped.
func Remember(d Driver, m Memory) Driver {
	m.Clock = clock.Or(m.Clock)
	if m.Warn == nil {
		m.Warn = func(error) {}
	}
	return &remembering{d: d, m: m}
}

// Close closes the wrapped driver, if it has anything to close.
func (r *remembering) Close() {
	if c, ok := r.d.(interface{ Close() }); ok {
		c.Close()
	}
}

// Run takes the turn in the conversation the record and the policy choose.
// A turn resumed after a crash never starts a new chat: its prompt is
// already in one.
func (r *remembering) Run(ctx context.Context, t Turn) (string, error) {
	c := r.load()
	// A resumed turn takes the verdict the process that sent it reached
	// from the same record: the prompt is in that conversation already.
	v := decideNewChat(c, r.m.Policy, r.m.Kind, t.Thread, r.m.Fresh && !t.Resume)
	if t.NewChat && !v.newChat {
		v = verdict{true, "the turn asked for a new chat"}
	}
	inner := t
	inner.NewChat = v.newChat && !t.Resume
	inner.Session = ""
	if !inner.NewChat {
		inner.Session = c.SessionID
	}
	if inner.Session != "" && c.Unanswered > 0 {
		t.note("the session continued holds %d earlier attempt(s) that got no reply: the %s command cannot fork a session, so their prompts stay in it", c.Unanswered, r.m.Kind)
	}
	submitted := false
	inner.OnStage = func(s Stage) error {
		submitted = submitted || s == StageSubmitted
		if t.OnStage != nil {
			return t.OnStage(s)
		}
		return nil
	}
	var reported string
	inner.OnSession = func(id string) {
		reported = id
		if t.OnSession != nil {
			t.OnSession(id)
		}
	}
	reply, err := r.d.Run(ctx, inner)
	if err != nil {
		// A failing model API says nothing of the session: a new one
		// would fail the same.
		if inner.Session != "" && errors.Is(err, ErrExecFailed) && !errors.Is(err, ErrModelAPI) && !errors.Is(err, context.Canceled) && !FailureOf(err).API() {
			err = fmt.Errorf("%w (the turn continued session %s; if the agent has lost it, start afresh with agentctl run --new-session)", err, inner.Session)
		}
		if inner.Session != "" && submitted && !r.m.Forks && r.m.Kind != kindGUI {
			c.Unanswered++
			if serr := r.save(c); serr != nil {
				r.m.Warn(fmt.Errorf("cannot record the attempt left in session %s: %w", inner.Session, serr))
			}
		}
		return "", err
	}
	if !t.Resume {
		r.m.Fresh = false
	}
	next := advance(c, v, r.m.Agent, r.m.Kind, t.Thread, reported, r.m.Clock.Now())
	if err := r.save(next); err != nil {
		r.m.Warn(fmt.Errorf("the reply is kept, but the conversation record is not: %w", err))
	}
	return reply, nil
}

// verdict is whether a turn starts a fresh conversation, and why.
type verdict struct {
	newChat bool
	why     string
}

// decideNewChat says whether the next turn of thread leaves conversation c.
func decideNewChat(c conversation, p NewChatPolicy, kind, thread string, fresh bool) verdict {
	switch {
	case fresh:
		return verdict{true, "agentctl run --new-session"}
	case c.Turns > 0 && c.Kind != kind:
		return verdict{true, fmt.Sprintf("the agent's kind changed from %s to %s", c.Kind, kind)}
	case kind != kindGUI && c.SessionID == "":
		if c.Turns > 0 {
			return verdict{true, "the last turn reported no session"}
		}
		return verdict{true, "no session yet"}
	case p.PerThread && thread != c.Thread:
		if c.Thread == "" {
			return verdict{true, "thread " + thread + " begins"}
		}
		return verdict{true, fmt.Sprintf("thread %s follows thread %s", thread, c.Thread)}
	case p.Every > 0 && c.Turns >= p.Every:
		return verdict{true, fmt.Sprintf("%d turns in one conversation (new_chat.every)", c.Turns)}
	}
	return verdict{}
}

// advance is the record after a turn of thread that got its reply.
func advance(c conversation, v verdict, agent, kind, thread, session string, now time.Time) conversation {
	if v.newChat {
		prev := c.Previous
		if c.Turns > 0 || c.SessionID != "" {
			prev = append(prev, ended{SessionID: c.SessionID, Turns: c.Turns, StartedAt: c.StartedAt, EndedAt: now})
			if over := len(prev) - maxPrevious; over > 0 {
				prev = prev[over:]
			}
		}
		c = conversation{StartedAt: now, Why: v.why, Previous: prev}
	}
	if c.StartedAt.IsZero() {
		c.StartedAt = now
	}
	c.Agent, c.Kind, c.Thread = agent, kind, thread
	c.Turns++
	c.Unanswered = 0
	c.UpdatedAt = now
	if session != "" {
		c.SessionID = session
	}
	return c
}

// load reads the record. A missing one is an empty conversation; one that
// cannot be read is set aside, never deleted, and the turn starts afresh.
func (r *remembering) load() conversation {
	var c conversation
	data, err := os.ReadFile(r.m.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return c
	}
	if err == nil {
		if err = json.Unmarshal(data, &c); err == nil {
			return c
		}
	}
	aside := fmt.Sprintf("%s.unreadable-%d", r.m.Path, r.m.Clock.Now().UnixNano())
	if rerr := os.Rename(r.m.Path, aside); rerr != nil {
		r.m.Warn(fmt.Errorf("cannot read the conversation record %s (%v), nor set it aside: %w", r.m.Path, err, rerr))
	} else {
		r.m.Warn(fmt.Errorf("cannot read the conversation record %s (%v); it is kept as %s and the next turn starts afresh", r.m.Path, err, aside))
	}
	return conversation{}
}

func (r *remembering) save(c conversation) error {
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.MkdirAll(filepath.Dir(r.m.Path)); err != nil {
		return err
	}
	return atomicfile.WriteFile(r.m.Path, append(data, '\n'))
}
