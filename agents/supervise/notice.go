package supervise

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentctl/agentctl/devlog"
	"github.com/agentctl/agentctl/mailbox"
)

// tellCrashLoop tells human (their mailbox) and the agent's devlog (the
// hub's, for the hub) that st's child keeps dying. The notice's id is
// derived from the agent and the minute, so a notice is never delivered
// twice.
func tellCrashLoop(root, human string, st *seat, deaths int, status string, tail []string, delay time.Duration, now time.Time) error {
	agent, what := st.agent, st.what()
	id := fmt.Sprintf("up-crashloop-%s-%s", strings.ToLower(agent), now.UTC().Format("20060102T1504"))
	detail := fmt.Sprintf("%s died %d times in a row, the last time with %s; agentctl up keeps restarting it, now every %s.", upperFirst(what), deaths, status, delay)
	if len(tail) > 0 {
		detail += "\n\nIts last lines:\n    " + strings.Join(tail, "\n    ")
	}
	detail += fmt.Sprintf("\n\nRun '%s' by hand to see why; 'agentctl down' stops every runner.", st.byHand)
	var errs []error
	if human != "" {
		msg := mailbox.Message{
			ID: id, From: "agentctl", To: human, Type: "recovery", Priority: mailbox.High,
			Subject: what + " keeps crashing", Body: detail, CreatedAt: now.UTC(),
			Meta: map[string]any{"agent": agent, "deaths": deaths},
		}
		if err := deliver(root, msg); err != nil {
			errs = append(errs, fmt.Errorf("cannot tell %s that %s keeps crashing: %w", human, agent, err))
		}
	}
	e := devlog.Entry{Time: now, Agent: agent, MessageID: id, Subject: st.kind + " keeps crashing", From: "agentctl", Outcome: "crashing", Note: detail}
	if err := devlog.Append(root, e); err != nil {
		errs = append(errs, fmt.Errorf("cannot write the crash loop of %s in its devlog: %w", agent, err))
	}
	return errors.Join(errs...)
}

// tellNeedsPerson tells human and the devlog that st's child stopped for
// a reason only they can mend, with its last lines (its error and hint),
// and what up watches to start it again. The id is derived from the agent
// and the minute, as a crash loop's.
func tellNeedsPerson(root, human string, st *seat, end ending, watch []string, now time.Time) error {
	agent, what := st.agent, st.what()
	id := fmt.Sprintf("up-needsperson-%s-%s", strings.ToLower(agent), now.UTC().Format("20060102T1504"))
	detail := fmt.Sprintf("%s stopped (%s) for a reason that restarting it would only repeat, so agentctl up does not restart it.", upperFirst(what), end.status)
	if len(end.tail) > 0 {
		detail += "\n\nIts last lines:\n    " + strings.Join(end.tail, "\n    ")
	}
	if len(watch) > 0 {
		detail += fmt.Sprintf("\n\nOnce it is mended, agentctl up starts it again by itself when %s changes.", strings.Join(watch, " or "))
	} else {
		detail += "\n\nOnce it is mended, restart agentctl up."
	}
	var errs []error
	if human != "" {
		msg := mailbox.Message{
			ID: id, From: "agentctl", To: human, Type: "recovery", Priority: mailbox.High,
			Subject: what + " stopped and needs you", Body: detail, CreatedAt: now.UTC(),
			Meta: map[string]any{"agent": agent, "status": end.status},
		}
		if err := deliver(root, msg); err != nil {
			errs = append(errs, fmt.Errorf("cannot tell %s that %s needs them: %w", human, agent, err))
		}
	}
	e := devlog.Entry{Time: now, Agent: agent, MessageID: id, Subject: st.kind + " stopped and needs a person", From: "agentctl", Outcome: "parked", Note: detail}
	if err := devlog.Append(root, e); err != nil {
		errs = append(errs, fmt.Errorf("cannot write in the devlog of %s that it needs a person: %w", agent, err))
	}
	return errors.Join(errs...)
}

// deliver puts msg in its recipient's mailbox, creating a person's
// mailbox that does not exist yet; one delivered before is not an error.
func deliver(root string, msg mailbox.Message) error {
	if err := mailbox.Create(root, msg.To); err != nil {
		return err
	}
	mb, err := mailbox.Open(root, msg.To)
	if err != nil {
		return err
	}
	if err := mb.Deliver(msg); err != nil && !errors.Is(err, mailbox.ErrDuplicate) {
		return err
	}
	return nil
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
