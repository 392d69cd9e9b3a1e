package cronspec

import (
	"testing"
	"time"
)

// The grammar agentctl.yaml documents: five fields, a leading seconds
// field, a descriptor; anything else is refused.
func TestParseReadsTheDocumentedGrammar(t *testing.T) {
	start := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for spec, next := range map[string]time.Time{
		"*/5 * * * *":    start.Add(5 * time.Minute),
		"*/10 * * * * *": start.Add(10 * time.Second),
		"@every 30s":     start.Add(30 * time.Second),
		"@hourly":        start.Add(time.Hour),
	} {
		s, err := Parse(spec)
		if err != nil {
			t.Errorf("%q: %v", spec, err)
			continue
		}
		if got := s.Next(start); !got.Equal(next) {
			t.Errorf("%q: next after %v is %v, want %v", spec, start, got, next)
		}
	}
	for _, spec := range []string{"", "every minute", "* * *", "* * * * * * *"} {
		if _, err := Parse(spec); err == nil {
			t.Errorf("%q was taken", spec)
		}
	}
}
