package config

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentctl/agentctl/internal/cronspec"
	"github.com/agentctl/agentctl/internal/layout"
)

// Run holds the settings of the per-agent runner (`agentctl run`).
type Run struct {
	// Heartbeat is how often status.json is rewritten while nothing else
	// happens, so that readers can tell a quiet runner from a dead one.
	// Every change of state is written at once anyway; the default, 30s,
	// is a quarter of recovery.stale_after and matches
	// coordination.board_look, so that an idle runner wakes once for both.
	Heartbeat Duration `yaml:"heartbeat"`
	// MaxPromptBytes refuses (dead-letters) a self-prompt longer than this
	// instead of cutting it: a truncated task is worse than none.
	MaxPromptBytes int `yaml:"max_prompt_bytes"`
	// ShutdownGrace is how long SIGINT/SIGTERM let a running turn finish
	// before it is cut off and left for the next runner to resume.
	ShutdownGrace Duration `yaml:"shutdown_grace"`
	// Resend says whether a turn cut off or failed after its prompt was
	// submitted may send the prompt again: "never", "always", or "auto"
	// (the default: yes for exec agents, whose command can simply run
	// again, never for chat windows, which already hold the prompt, nor
	// for acp seats, whose session does).
	Resend string `yaml:"resend"`
	// Templates is the folder, relative to the runtime root, where a
	// <type>.tmpl file overrides the built-in prompt template of that
	// message type (default.tmpl overrides all the others).
	Templates string `yaml:"templates"`
	// MaxHops is how many replies deep a thread may go (agents answering
	// agents) before its next message goes to a person instead.
	MaxHops int `yaml:"max_hops"`
	// MaxSendsPerReply caps the messages one reply may send; the rest are
	// refused and recorded.
	MaxSendsPerReply int `yaml:"max_sends_per_reply"`
	// NoBlockNotice is how many turns of one agent in a row may end "done
	// without block" (the prompt asked for the agentctl block, the reply
	// has none) before the person in the loop is told, once per run; 0:
	// never.
	NoBlockNotice int `yaml:"no_block_notice"`
}

// RateLimit bounds the prompts one agent is sent, so that a flood of
// messages does not burn the user's model quota. Zero means no limit.
type RateLimit struct {
	PerMinute int `yaml:"per_minute"`
	PerHour   int `yaml:"per_hour"`
}

// Recovery holds the thresholds of the recovery checks and the cron specs
// that run them inside every runner; `agentctl reconcile` runs them once.
type Recovery struct {
	// Lease is how long a claim may stay in processing/ with no runner
	// holding the mailbox before it is put back in the inbox.
	Lease Duration `yaml:"lease"`
	// StaleAfter: a heartbeat older than this means the runner is stalled.
	StaleAfter Duration `yaml:"stale_after"`
	// StallAfter: a turn running longer than this while messages wait
	// means the agent is stalled.
	StallAfter Duration `yaml:"stall_after"`
	Cron       Cron     `yaml:"cron"`
}

// Cron holds the schedules of the recovery loops, in cron syntax with an
// optional seconds field ("*/30 * * * * *") or descriptors ("@every 1m").
type Cron struct {
	Requeue string `yaml:"requeue"`
	Expire  string `yaml:"expire"`
	Stall   string `yaml:"stall"`
	Rescan  string `yaml:"rescan"`
}

// Supervisor is who hears about stalled agents.
type Supervisor struct {
	// Agent gets a recovery notice for every stall; empty: the notice goes
	// to the devlog only.
	Agent string `yaml:"agent"`
	// Nudge, if set, is sent as an urgent "resume" message to a stalled
	// agent, to be pasted into its window once its runner moves again.
	Nudge string `yaml:"nudge"`
}

// Resend values.
const (
	ResendAuto   = "auto"
	ResendNever  = "never"
	ResendAlways = "always"
)

func defaultRun() Run {
	return Run{
		Heartbeat:        Duration(30 * time.Second),
		MaxPromptBytes:   64 * 1024,
		ShutdownGrace:    Duration(10 * time.Second),
		Resend:           ResendAuto,
		Templates:        layout.TemplatesDir,
		MaxHops:          20,
		MaxSendsPerReply: 10,
		NoBlockNotice:    3,
	}
}

func defaultRateLimit() RateLimit { return RateLimit{PerMinute: 10, PerHour: 200} }

func defaultRecovery() Recovery {
	return Recovery{
		Lease:      Duration(30 * time.Minute),
		StaleAfter: Duration(2 * time.Minute),
		StallAfter: Duration(20 * time.Minute),
		Cron: Cron{
			Requeue: "@every 1m",
			Expire:  "@every 1m",
			Stall:   "*/30 * * * * *",
			Rescan:  "@every 5m",
		},
	}
}

// validateRunner checks the run, rate_limit, recovery and supervisor
// sections.
func (c Config) validateRunner() error {
	r := c.Run
	for _, d := range []struct {
		name string
		v    Duration
	}{
		{"run.heartbeat", r.Heartbeat}, {"run.shutdown_grace", c.Run.ShutdownGrace},
		{"recovery.lease", c.Recovery.Lease}, {"recovery.stale_after", c.Recovery.StaleAfter},
		{"recovery.stall_after", c.Recovery.StallAfter},
	} {
		if d.v <= 0 {
			return fmt.Errorf("%s: must be a positive duration such as 30s", d.name)
		}
	}
	if c.Recovery.StaleAfter <= r.Heartbeat {
		return fmt.Errorf("recovery.stale_after: must be longer than run.heartbeat, or every quiet runner looks stalled")
	}
	if r.MaxPromptBytes < 1 {
		return fmt.Errorf("run.max_prompt_bytes: must be at least 1")
	}
	if r.MaxHops < 1 || r.MaxSendsPerReply < 1 {
		return fmt.Errorf("run.max_hops and run.max_sends_per_reply: must be at least 1")
	}
	if r.NoBlockNotice < 0 {
		return fmt.Errorf("run.no_block_notice: must be 0 (never) or more")
	}
	switch r.Resend {
	case ResendAuto, ResendNever, ResendAlways:
	default:
		return fmt.Errorf("run.resend: %q is not auto, never or always", r.Resend)
	}
	if r.Templates == "" || strings.Contains(r.Templates, "..") || filepath.IsAbs(r.Templates) || strings.HasPrefix(r.Templates, "/") {
		return fmt.Errorf("run.templates: %q must be a folder inside the runtime root, named relative to it", r.Templates)
	}
	if c.RateLimit.PerMinute < 0 || c.RateLimit.PerHour < 0 {
		return fmt.Errorf("rate_limit: limits cannot be negative (0 means no limit)")
	}
	for _, s := range []struct{ name, spec string }{
		{"requeue", c.Recovery.Cron.Requeue}, {"expire", c.Recovery.Cron.Expire},
		{"stall", c.Recovery.Cron.Stall}, {"rescan", c.Recovery.Cron.Rescan},
	} {
		if _, err := cronspec.Parse(s.spec); err != nil {
			return fmt.Errorf("recovery.cron.%s: %q: %v", s.name, s.spec, err)
		}
	}
	if sup := c.Supervisor.Agent; sup != "" {
		if _, err := c.Agent(sup); err != nil {
			return fmt.Errorf("supervisor.agent: %w", err)
		}
	}
	return nil
}

// ResendsStopped says whether a prompt the agent stopped unanswered when
// its runner stopped on purpose may be sent again by the next runner:
// unless resend is never. Nothing of it was answered, so sending it again
// is what a person would do; auto forbids only sending again a prompt that
// may have been answered.
func (r Run) ResendsStopped() bool { return r.Resend != ResendNever }

// Resends reports whether a turn of agent a that was cut off after its
// prompt was submitted may send the prompt again.
func (r Run) Resends(a Agent) bool {
	switch r.Resend {
	case ResendAlways:
		return true
	case ResendNever:
		return false
	}
	return a.EffectiveDriver() == DriverExec
}
