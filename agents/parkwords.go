package agents

import (
	"fmt"
	"time"

	"github.com/agentctl/agentctl/cursor"
)

// parkTold is how the start or the end of a park that is told (an outage,
// a missing window) is said: the event, which is also the devlog entry's
// outcome, its devlog note, and the person's notice.
type parkTold struct {
	event, note, subject, body string
	said                       string // the log line of an end
}

// parkBegins words the start of a park of kind for agent at now.
func parkBegins(kind cursor.FailureKind, agent string, now time.Time, cause error) parkTold {
	if kind == cursor.FailureSeatMissing {
		return parkTold{event: "seat-missing",
			note:    fmt.Sprintf("the agent's window is not there, and nothing was sent; the seat waits and looks again, %s apart at first, up to %s apart, and says when it is back: %v", outageFirstProbe, outageMaxProbe, cause),
			subject: fmt.Sprintf("%s: its window is not there", agent),
			body: fmt.Sprintf("%s's turn at %s found no window to take it, and nothing was sent: %v\n\nIs its app closed, or started without its DevTools port? The seat waits and looks again, %s apart at first and up to %s apart, for as long as it takes; no message is dead-lettered for it. You are told once, and once more when it is back.",
				agent, now.UTC().Format(time.RFC3339), cause, outageFirstProbe, outageMaxProbe)}
	}
	return parkTold{event: "api-outage",
		note:    fmt.Sprintf("the model API is out of reach or overloaded; the seat waits and tries again, %s apart at first, up to %s apart, and says when it works again: %v", outageFirstProbe, outageMaxProbe, cause),
		subject: fmt.Sprintf("%s: the model API is down or overloaded", agent),
		body: fmt.Sprintf("The model API refused a turn of %s at %s: %v\n\nThe seat waits and tries again, %s apart at first and up to %s apart, for as long as it takes; no message is dead-lettered for it. You are told once, and once more when it works again.",
			agent, now.UTC().Format(time.RFC3339), cause, outageFirstProbe, outageMaxProbe)}
}

// parkEnds words the end of a park of kind for agent at now, after took.
func parkEnds(kind cursor.FailureKind, agent string, now time.Time, took time.Duration) parkTold {
	if kind == cursor.FailureSeatMissing {
		return parkTold{event: "seat-back", said: "the agent's window is back",
			note:    fmt.Sprintf("the agent's window is back, after %s", took),
			subject: fmt.Sprintf("%s: its window is back", agent),
			body: fmt.Sprintf("%s took a turn again at %s, after %s without its window. The messages that waited are worked in order.",
				agent, now.UTC().Format(time.RFC3339), took)}
	}
	return parkTold{event: "api-resumed", said: "the model API works again",
		note:    fmt.Sprintf("the model API works again, after %s", took),
		subject: fmt.Sprintf("%s: the model API works again", agent),
		body: fmt.Sprintf("The model API took %s's turns again at %s, after %s. The messages that waited are worked in order.",
			agent, now.UTC().Format(time.RFC3339), took)}
}
