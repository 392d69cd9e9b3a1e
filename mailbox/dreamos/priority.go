package dreamos

import (
	"fmt"
	"strings"
)

// The four priorities, most pressing first.
const (
	Urgent = "urgent"
	High   = "high"
	Normal = "normal"
	Low    = "low"
)

// ParsePriority reads a priority the way Dream.OS wrote them: words in any
// case ("URGENT", "regular", "MEDIUM", "critical", "P1").
func ParsePriority(s string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "urgent", "critical", "emergency", "p0", "highest", "immediate":
		return Urgent, nil
	case "high", "important", "p1":
		return High, nil
	case "", "normal", "regular", "medium", "default", "p2", "standard":
		return Normal, nil
	case "low", "minor", "p3", "p4", "lowest":
		return Low, nil
	}
	return "", fmt.Errorf("unknown priority %q: want low, normal, high or urgent", s)
}

// priorityFromLevel maps P-levels: 0 urgent, 1 high, 2 normal, 3 and up low.
func priorityFromLevel(level float64) string {
	switch {
	case level <= 0:
		return Urgent
	case level <= 1:
		return High
	case level <= 2:
		return Normal
	}
	return Low
}

// priorityFromScore maps Dream.OS priority scores, from 0 to 1 with higher
// meaning more urgent (its queue wrote 1.0 for urgent, 0.5 for regular).
func priorityFromScore(score float64) string {
	switch {
	case score >= 0.9:
		return Urgent
	case score >= 0.7:
		return High
	case score >= 0.3:
		return Normal
	}
	return Low
}
