package missioncontrol

import (
	"context"
	"fmt"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/agentctl/agentctl/agents/cost"
	"github.com/agentctl/agentctl/internal/clock"
)

// Terminal is the Bubble Tea model of `agentctl top`: the agents' tiles as
// a table, the board's columns, dead letters and what waits for people,
// redrawn on every snapshot the feed publishes. Keys act on the selected
// row: r retries a dead letter, s skips an agent's turn (after a y).
type Terminal struct {
	Feed    *Feed
	Actions Actions
	// Clock ages the turns shown; clock.System when nil.
	Clock clock.Clock

	snap    Snapshot
	seq     uint64
	pane    int // 0 agents, 1 dead letters
	row     [2]int
	confirm string // the agent whose skip waits for y
	notice  string
	width   int
}

type snapshotMsg struct {
	snap Snapshot
	seq  uint64
}
type tickMsg time.Time
type doneMsg struct {
	text string
	err  error
}

// Init starts listening to the feed and the clock that ages the turns.
func (m *Terminal) Init() tea.Cmd {
	m.Clock = clock.Or(m.Clock)
	m.snap, _, m.seq, _ = m.Feed.Current()
	return tea.Batch(m.next(), tick())
}

// next waits for the feed's next snapshot.
func (m *Terminal) next() tea.Cmd {
	seq := m.seq
	return func() tea.Msg {
		for {
			snap, _, cur, changed := m.Feed.Current()
			if cur != seq {
				return snapshotMsg{snap, cur}
			}
			<-changed
		}
	}
}

func tick() tea.Cmd {
	return tea.Tick(time.Second, func(t time.Time) tea.Msg { return tickMsg(t) })
}

// Update handles keys, snapshots, the clock and the outcome of actions.
func (m *Terminal) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case snapshotMsg:
		m.snap, m.seq = msg.snap, msg.seq
		m.clamp()
		return m, m.next()
	case tickMsg:
		return m, tick()
	case tea.WindowSizeMsg:
		m.width = msg.Width
	case doneMsg:
		if msg.err != nil {
			m.notice = "error: " + msg.err.Error()
			if h, ok := msg.err.(interface{ Hint() string }); ok && h.Hint() != "" {
				m.notice += " (hint: " + h.Hint() + ")"
			}
		} else {
			m.notice = msg.text
		}
	case tea.KeyMsg:
		return m, m.key(msg.String())
	}
	return m, nil
}

func (m *Terminal) rows(pane int) int {
	if pane == 0 {
		return len(m.snap.Agents)
	}
	return len(m.snap.Dead)
}

func (m *Terminal) clamp() {
	for p := range m.row {
		m.row[p] = max(0, min(m.row[p], m.rows(p)-1))
	}
}

func (m *Terminal) key(k string) tea.Cmd {
	if m.confirm != "" {
		agent := m.confirm
		m.confirm = ""
		if k != "y" {
			m.notice = "skip cancelled"
			return nil
		}
		m.notice = "asking " + agent + "'s runner to skip its turn…"
		return m.act(func(ctx context.Context) (string, error) {
			return m.Actions.Skip(ctx, SkipRequest{Agent: agent, Reason: "skipped from agentctl top"})
		})
	}
	switch k {
	case "q", "ctrl+c":
		return tea.Quit
	case "tab":
		m.pane = 1 - m.pane
	case "up", "k":
		m.row[m.pane]--
	case "down", "j":
		m.row[m.pane]++
	case "r":
		if m.pane != 1 || len(m.snap.Dead) == 0 {
			m.notice = "select a dead letter first (tab)"
			return nil
		}
		d := m.snap.Dead[m.row[1]]
		m.notice = "retrying " + d.Ref + "…"
		return m.act(func(ctx context.Context) (string, error) {
			return m.Actions.Retry(ctx, RetryRequest{Ref: d.Ref, Mailbox: d.Mailbox})
		})
	case "s":
		if m.pane != 0 || len(m.snap.Agents) == 0 {
			m.notice = "select an agent first (tab)"
			return nil
		}
		a := m.snap.Agents[m.row[0]]
		if a.State != "working" {
			m.notice = a.Name + " is not taking a turn"
			return nil
		}
		m.confirm = a.Name
		m.notice = fmt.Sprintf("skip %s's turn on %q? its message goes to deadletter/ (y/n)", a.Name, a.Subject)
	}
	m.clamp()
	return nil
}

func (m *Terminal) act(f func(context.Context) (string, error)) tea.Cmd {
	return func() tea.Msg {
		text, err := f(context.Background())
		return doneMsg{text, err}
	}
}

var (
	bold     = lipgloss.NewStyle().Bold(true)
	dim      = lipgloss.NewStyle().Faint(true)
	selected = lipgloss.NewStyle().Reverse(true)
	alarm    = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("9"))
	warn     = lipgloss.NewStyle().Foreground(lipgloss.Color("11"))
	good     = lipgloss.NewStyle().Foreground(lipgloss.Color("10"))
)

// View draws the whole screen.
func (m *Terminal) View() string {
	now := m.Clock.Now()
	var b strings.Builder
	s := m.snap
	b.WriteString(bold.Render("agentctl top") + "  " + dim.Render(s.Root) + "\n\n")
	b.WriteString(bold.Render(fmt.Sprintf("%-10s %-22s %-34s %-18s %5s %5s %9s  %s", "AGENT", "STATE", "TURN", "QUEUE u/h/n/l", "DONE", "DEAD", "TODAY", "LAST DEVLOG")) + "\n")
	for i, a := range s.Agents {
		state := a.State
		style := lipgloss.NewStyle()
		switch {
		case a.Problem != "":
			state, style = "broken", alarm
		case a.Stalled:
			state, style = "STALLED", alarm
		case a.Runner.Runner == "stopped" || a.Runner.Runner == "gone":
			state, style = a.Runner.Runner, dim
		case a.State == "rate-limited" || a.State == "budget-spent" || a.State == "api-outage" || a.State == "seat-missing" || a.State == "hub-unreachable":
			style = warn
		case a.State == "idle":
			style = good
		}
		if a.Silent != "" {
			state, style = state+" (silent)", alarm
		}
		if a.HoldsLock != "" {
			state += " 🔒"
		}
		turn := ""
		if a.State == "working" && a.Since != nil {
			turn = now.Sub(*a.Since).Round(time.Second).String() + " " + a.Subject
		}
		q := a.Queue
		line := fmt.Sprintf("%-10s %s %-34s %-18s %5d %5d %9s  %s", a.Name, style.Render(fmt.Sprintf("%-22s", clip(state, 22))), clip(turn, 34),
			fmt.Sprintf("%d/%d/%d/%d", q["urgent"], q["high"], q["normal"], q["low"]), a.Done, a.Dead, clip(a.TodayBrief, 9), clip(a.LastLog, 60))
		if m.pane == 0 && i == m.row[0] {
			line = selected.Render(line)
		}
		b.WriteString(line + "\n")
	}
	if s.Spent.Turns > 0 {
		b.WriteString(dim.Render(fmt.Sprintf("today (UTC): %d turns, %s tokens, %s", s.Spent.Turns, cost.Tokens(s.Spent.Tokens()), s.Spent.Brief())) + "\n")
	}
	for _, a := range s.Agents {
		if a.Seat != nil {
			b.WriteString(seatLine(a.Name, *a.Seat, now) + "\n")
		}
	}
	for _, a := range s.Agents {
		if line := troubleLine(a); line != "" {
			b.WriteString(warn.Render(line) + "\n")
		}
	}
	b.WriteString("\n" + bold.Render("BOARD") + "  ")
	for _, c := range s.Columns {
		var ids []string
		for _, t := range c.Tasks {
			ids = append(ids, t.ID)
		}
		b.WriteString(fmt.Sprintf("%s %d [%s]   ", c.Status, len(c.Tasks), clip(strings.Join(ids, " "), 30)))
	}
	b.WriteString("\n\n" + bold.Render(deadTitle(s)) + "\n")
	for i, d := range s.Dead {
		line := fmt.Sprintf("%-10s %-36s %-28s %s", d.Mailbox, clip(d.Ref, 36), clip(d.Subject, 28), clip(d.Reason, 60))
		if m.pane == 1 && i == m.row[1] {
			line = selected.Render(line)
		}
		b.WriteString(line + "\n")
	}
	for _, p := range s.People {
		approvals := 0
		for _, l := range p.Waiting {
			if l.Type == "approval" {
				approvals++
			}
		}
		if n := len(p.Waiting) - approvals; n > 0 {
			b.WriteString(fmt.Sprintf("\n%s: %d message(s) wait for an answer (agentctl inbox %s)\n", p.Name, n, p.Name))
		}
		if approvals > 0 {
			b.WriteString(fmt.Sprintf("\n%s: %d approval request(s) wait (agentctl inbox %s; agentctl approve ID or deny ID)\n", p.Name, approvals, p.Name))
		}
		if n := p.Pending - len(p.Waiting); n > 0 {
			b.WriteString(fmt.Sprintf("\n%s: %d more wait after these (agentctl inbox %s)\n", p.Name, n, p.Name))
		}
	}
	for _, l := range s.Locks {
		b.WriteString(fmt.Sprintf("desktop input lock %s: %s (pid %d) for %s\n", l.Lock, l.Agent, l.PID, now.Sub(l.Since).Round(time.Second)))
	}
	for _, p := range s.Problems {
		b.WriteString(alarm.Render(p) + "\n")
	}
	b.WriteString("\n" + m.notice + "\n")
	b.WriteString(dim.Render("tab: agents/dead letters  ↑↓: select  s: skip the agent's turn  r: retry the dead letter  q: quit") + "\n")
	return b.String()
}

// troubleLine says what of an agent's work did not end plainly done: the
// running runner's counts, and the run of replies without the agentctl
// block; "" when there is nothing to say.
func troubleLine(a Agent) string {
	var parts []string
	if a.DoneWithErrors > 0 {
		parts = append(parts, fmt.Sprintf("%d done with errors", a.DoneWithErrors))
	}
	if a.DoneWithoutBlock > 0 {
		parts = append(parts, fmt.Sprintf("%d done without block", a.DoneWithoutBlock))
	}
	if a.NoBlockRun > 1 {
		parts = append(parts, fmt.Sprintf("the last %d replies in a row had no agentctl block", a.NoBlockRun))
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("%s: %s (agentctl inbox %s --state done)", a.Name, strings.Join(parts, ", "), a.Name)
}

// seatLine says where a remote agent's turns are taken, and how the hub
// last heard from there.
func seatLine(agent string, s Seat, now time.Time) string {
	head := fmt.Sprintf("seat of %s on %s: ", agent, s.Machine)
	switch {
	case s.HubDown:
		return head + warn.Render("unknown, the hub is not running") + dim.Render(" (start 'agentctl hub')")
	case !s.Heard:
		return head + alarm.Render("never heard") + dim.Render(fmt.Sprintf(" (run 'agentctl run %s --hub URL' on %s)", agent, s.Machine))
	case !s.Present:
		return head + warn.Render(fmt.Sprintf("absent, last beat %s ago", now.Sub(*s.Beat).Round(time.Second)))
	}
	return head + good.Render("present, "+s.State)
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// deadTitle counts every dead letter, and says so when the snapshot holds
// only the newest of them.
func deadTitle(s Snapshot) string {
	total := 0
	for _, a := range s.Agents {
		total += a.Dead
	}
	for _, p := range s.People {
		total += p.Dead
	}
	if total > len(s.Dead) {
		return fmt.Sprintf("DEAD LETTERS (newest %d of %d; agentctl inbox AGENT --state dead)", len(s.Dead), total)
	}
	return fmt.Sprintf("DEAD LETTERS (%d)", len(s.Dead))
}
