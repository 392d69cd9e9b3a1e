package supervise

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentctl/agentctl/devlog"
	"github.com/agentctl/agentctl/mailbox"
)

// notice is what the supervisor tells of one of its children: a message
// to the person in the loop and an entry in the agent's devlog (the
// hub's, for the hub), both with detail.
type notice struct {
	kind    string // in the id: crashloop, needsperson
	subject string // after what the child is: "keeps crashing"
	entry   string // the devlog entry's subject, after the child's kind
	outcome string // the devlog entry's
	detail  string
	meta    map[string]any
}

// tell delivers n about st's child to human ("" tells the devlog only).
// The id is derived from the agent and the minute, so a notice is never
// delivered twice.
func tell(root, human string, st *seat, n notice, now time.Time) error {
	agent, what := st.agent, st.what()
	id := fmt.Sprintf("up-%s-%s-%s", n.kind, strings.ToLower(agent), now.UTC().Format("20060102T1504"))
	var errs []error
	if human != "" {
		msg := mailbox.Message{
			ID: id, From: "agentctl", To: human, Type: "recovery", Priority: mailbox.High,
			Subject: what + " " + n.subject, Body: n.detail, CreatedAt: now.UTC(), Meta: n.meta,
		}
		if err := mailbox.DeliverNotice(root, msg); err != nil {
			errs = append(errs, fmt.Errorf("cannot tell %s that %s %s: %w", human, what, n.subject, err))
		}
	}
	e := devlog.Entry{Time: now, Agent: agent, MessageID: id, Subject: st.kind + " " + n.entry, From: "agentctl", Outcome: n.outcome, Note: n.detail}
	if err := devlog.Append(root, e); err != nil {
		errs = append(errs, fmt.Errorf("cannot write in the devlog of %s that %s %s: %w", agent, what, n.subject, err))
	}
	return errors.Join(errs...)
}

// tellCrashLoop tells that st's child keeps dying.
func tellCrashLoop(root, human string, st *seat, deaths int, status string, tail []string, delay time.Duration, now time.Time) error {
	detail := fmt.Sprintf("%s died %d times in a row, the last time with %s; agentctl up keeps restarting it, now every %s.", upperFirst(st.what()), deaths, status, delay)
	detail += lastLines(tail)
	detail += fmt.Sprintf("\n\nRun '%s' by hand to see why; 'agentctl down' stops every runner.", st.byHand)
	return tell(root, human, st, notice{kind: "crashloop", subject: "keeps crashing", entry: "keeps crashing", outcome: "crashing", detail: detail,
		meta: map[string]any{"agent": st.agent, "deaths": deaths}}, now)
}

// tellNeedsPerson tells that st's child stopped for a reason only a
// person can mend, with its last lines (its error and hint), and what up
// watches to start it again.
func tellNeedsPerson(root, human string, st *seat, end ending, watch []string, now time.Time) error {
	detail := fmt.Sprintf("%s stopped (%s) for a reason that restarting it would only repeat, so agentctl up does not restart it.", upperFirst(st.what()), end.status)
	detail += lastLines(end.tail)
	if len(watch) > 0 {
		detail += fmt.Sprintf("\n\nOnce it is mended, agentctl up starts it again by itself when %s changes.", strings.Join(watch, " or "))
	} else {
		detail += "\n\nOnce it is mended, restart agentctl up."
	}
	return tell(root, human, st, notice{kind: "needsperson", subject: "stopped and needs you", entry: "stopped and needs a person", outcome: "parked", detail: detail,
		meta: map[string]any{"agent": st.agent, "status": end.status}}, now)
}

func lastLines(tail []string) string {
	if len(tail) == 0 {
		return ""
	}
	return "\n\nIts last lines:\n    " + strings.Join(tail, "\n    ")
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
