package agents

import "time"

// rateLimit bounds prompts per minute and per hour with sliding windows:
// it remembers the times of the last hour's prompts.
type rateLimit struct {
	perMinute, perHour int
	sent               []time.Time // oldest first, within the last hour
}

func newRateLimit(perMinute, perHour int) *rateLimit {
	return &rateLimit{perMinute: perMinute, perHour: perHour}
}

// allow reports whether a prompt may be sent at now, and if not, when.
func (l *rateLimit) allow(now time.Time) (ok bool, until time.Time) {
	l.forget(now)
	if l.perHour > 0 && len(l.sent) >= l.perHour {
		return false, l.sent[len(l.sent)-l.perHour].Add(time.Hour)
	}
	if l.perMinute > 0 {
		recent := 0
		for i := len(l.sent) - 1; i >= 0 && now.Sub(l.sent[i]) < time.Minute; i-- {
			recent++
		}
		if recent >= l.perMinute {
			return false, l.sent[len(l.sent)-l.perMinute].Add(time.Minute)
		}
	}
	return true, time.Time{}
}

// add counts a prompt sent at now.
func (l *rateLimit) add(now time.Time) {
	if l.perMinute == 0 && l.perHour == 0 {
		return
	}
	l.sent = append(l.sent, now)
}

func (l *rateLimit) forget(now time.Time) {
	i := 0
	for i < len(l.sent) && now.Sub(l.sent[i]) >= time.Hour {
		i++
	}
	l.sent = l.sent[i:]
}
