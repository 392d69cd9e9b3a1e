package dreamos

import (
	"regexp"
	"strings"
	"sync"
)

// Dream.OS writers often said how pressing a message was only in its
// title: "🚨 URGENT MESSAGE", "[HIGH PRIORITY] ...", "CRITICAL: ...". Those
// words are read when no priority field or header says otherwise. The 🚨
// alone says nothing: one writer put it on every message, regular ones
// too.
var (
	// "[HIGH PRIORITY]", "[URGENT]", "[P1]", "(LOW)".
	titleTag = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`[\[(]\s*([A-Za-z0-9 _-]{1,30}?)\s*[\])]`)
	})
	// "high priority", "LOW-PRIORITY", "Priority: high", "prio P0".
	titlePhrase = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b([a-z]+\d?)[\s_-]+prio(?:rity)?\b|\bprio(?:rity)?\s*[:=\s-]\s*([a-z]+\d?)\b`)
	})
	// "CRITICAL: ...", "⚠️ Urgent - ...", "High! ...": a word that opens
	// the title, set off by a colon, a dash or an exclamation mark.
	titleLead = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[^A-Za-z0-9]*([A-Za-z]+\d?)\s*(?::|!|\s[-–—]\s)`)
	})
	// Words that say "urgent" wherever they stand in a title, unless
	// denied ("not urgent", "non-urgent"); shouted, the more alarming
	// words too.
	titleUrgent  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)(\bnot\s+|\bnon[\s-]?)?\burgent\b`) })
	titleShouted = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\b(CRITICAL|EMERGENCY|IMMEDIATE)\b`) })
)

// PriorityInTitle is the priority a title states ("🚨 URGENT MESSAGE",
// "[HIGH PRIORITY] Review", "CRITICAL: disk full"), or "" when it states
// none. Only words that say how pressing a message is count: "Fix the
// critical path" and a 🚨 alone say nothing.
func PriorityInTitle(title string) string {
	word := func(s string, normalToo bool) string {
		p, err := ParsePriority(s)
		if err != nil || strings.TrimSpace(s) == "" || p == Normal && !normalToo {
			return ""
		}
		return p
	}
	for _, m := range titleTag().FindAllStringSubmatch(title, -1) {
		tag := strings.ToLower(m[1])
		tag = strings.TrimSpace(strings.NewReplacer("priority", " ", "prio", " ", "_", " ", "-", " ").Replace(tag))
		if p := word(tag, true); p != "" {
			return p
		}
	}
	for _, m := range titlePhrase().FindAllStringSubmatch(title, -1) {
		if p := word(m[1]+m[2], true); p != "" {
			return p
		}
	}
	if m := titleLead().FindStringSubmatch(title); m != nil {
		if p := word(m[1], false); p != "" {
			return p
		}
	}
	for _, m := range titleUrgent().FindAllStringSubmatch(title, -1) {
		if m[1] == "" {
			return Urgent
		}
	}
	if titleShouted().MatchString(title) {
		return Urgent
	}
	return ""
}
