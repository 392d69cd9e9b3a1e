// Package lore turns a day of the swarm (devlog entries and board changes)
// into a lore entry: a short chronicle in <root>/lore/YYYY-MM-DD.md, told
// through a text/template and a translation dictionary that renames plain
// things (agent, task, success) into the lore's words.
//
// The same input always gives the same bytes: events are sorted by time,
// agent and id, maps are never ranged in template order, and nothing reads
// the clock. Days are UTC days, like the devlog times.
//
// The dictionary has the shape of Dream.OS's dream_translation.yaml, which
// loads as is; a default dictionary and template are built in. Gather reads
// a day's devlogs and boards; the package never writes either.
package lore

import (
	"bytes"
	_ "embed"
	"fmt"
	"sort"
	"strings"
	"text/template"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/agentctl/agentctl/devlog"
	"github.com/agentctl/agentctl/internal/atomicfile"
	"github.com/agentctl/agentctl/internal/layout"
	"github.com/agentctl/agentctl/internal/sizecap"
)

// LoreDir is the lore folder's name under a runtime root.
const LoreDir = layout.LoreDir

//go:embed default_dictionary.yaml
var defaultDictionary []byte

//go:embed default.md.tmpl
var defaultTemplate string

// Dictionary maps plain words to the lore's words.
type Dictionary struct {
	Components    map[string]string `yaml:"components"`
	States        map[string]string `yaml:"states"`
	Actions       map[string]string `yaml:"actions"`
	Locations     map[string]string `yaml:"locations"`
	NarrativeTone Tone              `yaml:"narrative_tone"`
}

// Tone describes how the lore is told; templates may use it.
type Tone struct {
	Style   string `yaml:"style"`
	Voice   string `yaml:"voice"`
	Cadence string `yaml:"cadence"`
}

// ParseDictionary reads a dictionary; unknown sections are refused so a
// misspelt one is noticed. name is used in errors.
func ParseDictionary(name string, data []byte) (Dictionary, error) {
	var d Dictionary
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&d); err != nil {
		return Dictionary{}, fmt.Errorf("%s: not a lore dictionary: %w", name, err)
	}
	return d, nil
}

// DefaultDictionary is the built-in dictionary.
func DefaultDictionary() Dictionary {
	d, err := ParseDictionary("built-in dictionary", defaultDictionary)
	if err != nil {
		panic(err)
	}
	return d
}

// LoadDictionary reads a dictionary file.
func LoadDictionary(path string) (Dictionary, error) {
	data, err := sizecap.ReadFile(path)
	if err != nil {
		return Dictionary{}, fmt.Errorf("cannot read dictionary: %w", err)
	}
	return ParseDictionary(path, data)
}

func lookup(m map[string]string, key string) string {
	if v, ok := m[key]; ok && v != "" {
		return v
	}
	return strings.ReplaceAll(key, "_", " ")
}

// BoardChange is a task's state at the moment it last changed that day.
type BoardChange struct {
	Time   time.Time
	TaskID string
	Title  string
	Status string
	Owner  string
}

// Input is one day of the swarm.
type Input struct {
	Date    string // YYYY-MM-DD
	Entries []devlog.Entry
	Changes []BoardChange
}

// Day returns the UTC bounds of a YYYY-MM-DD date.
func Day(date string) (start, end time.Time, err error) {
	start, err = time.Parse(time.DateOnly, date)
	if err != nil {
		return time.Time{}, time.Time{}, fmt.Errorf("date %q is not YYYY-MM-DD", date)
	}
	return start, start.AddDate(0, 0, 1), nil
}

// ParseTemplate reads a lore template; it may call component, state,
// action and location to translate a word through the dictionary.
func ParseTemplate(name, text string, d Dictionary) (*template.Template, error) {
	t, err := template.New(name).Option("missingkey=error").Funcs(template.FuncMap{
		"component": func(k string) string { return lookup(d.Components, k) },
		"state":     func(k string) string { return lookup(d.States, k) },
		"action":    func(k string) string { return lookup(d.Actions, k) },
		"location":  func(k string) string { return lookup(d.Locations, k) },
	}).Parse(text)
	if err != nil {
		return nil, fmt.Errorf("not a lore template: %w", err)
	}
	return t, nil
}

// DefaultTemplate is the built-in template's text.
func DefaultTemplate() string { return defaultTemplate }

type eventView struct {
	devlog.Entry
	Clock, State string
}

type agentView struct {
	Name   string
	Events []eventView
}

type changeView struct {
	BoardChange
	Clock, State string
}

type view struct {
	Date    string
	Tone    Tone
	Agents  []agentView
	Changes []changeView
	Counts  struct{ Events, Success, Failure, Notes int }
}

// outcomeState maps a devlog outcome or board status onto the dictionary's
// states: idle, busy, success, failure.
func outcomeState(s string) string {
	switch strings.ToLower(s) {
	case "done", "ok", "success", "replied", "answered":
		return "success"
	case "failed", "failure", "error", "deadletter", "dead-letter", "blocked":
		return "failure"
	case "in_progress", "review", "retry", "busy", "running":
		return "busy"
	}
	return "idle"
}

// Render tells the day through tmpl. Entries and changes outside the date
// are left out.
func Render(in Input, d Dictionary, tmpl *template.Template) ([]byte, error) {
	start, end, err := Day(in.Date)
	if err != nil {
		return nil, err
	}
	within := func(t time.Time) bool { return !t.Before(start) && t.Before(end) }
	v := view{Date: in.Date, Tone: d.NarrativeTone}
	entries := append([]devlog.Entry(nil), in.Entries...)
	sort.SliceStable(entries, func(i, j int) bool {
		a, b := entries[i], entries[j]
		if !a.Time.Equal(b.Time) {
			return a.Time.Before(b.Time)
		}
		if a.Agent != b.Agent {
			return a.Agent < b.Agent
		}
		return a.MessageID < b.MessageID
	})
	byAgent := map[string]int{}
	for _, e := range entries {
		if !within(e.Time) {
			continue
		}
		i, ok := byAgent[e.Agent]
		if !ok {
			i = len(v.Agents)
			byAgent[e.Agent] = i
			v.Agents = append(v.Agents, agentView{Name: e.Agent})
		}
		ev := eventView{Entry: e, Clock: e.Time.UTC().Format("15:04"), State: outcomeState(e.Outcome)}
		ev.Note = strings.Join(strings.Fields(e.Note), " ")
		ev.Error = strings.Join(strings.Fields(e.Error), " ")
		v.Agents[i].Events = append(v.Agents[i].Events, ev)
		if e.IsNote() {
			v.Counts.Notes++
			continue
		}
		v.Counts.Events++
		switch ev.State {
		case "success":
			v.Counts.Success++
		case "failure":
			v.Counts.Failure++
		}
	}
	sort.SliceStable(v.Agents, func(i, j int) bool { return v.Agents[i].Name < v.Agents[j].Name })
	changes := append([]BoardChange(nil), in.Changes...)
	sort.SliceStable(changes, func(i, j int) bool {
		if !changes[i].Time.Equal(changes[j].Time) {
			return changes[i].Time.Before(changes[j].Time)
		}
		return changes[i].TaskID < changes[j].TaskID
	})
	for _, c := range changes {
		if within(c.Time) {
			v.Changes = append(v.Changes, changeView{BoardChange: c, Clock: c.Time.UTC().Format("15:04"), State: outcomeState(c.Status)})
		}
	}
	var out bytes.Buffer
	if err := tmpl.Execute(&out, v); err != nil {
		return nil, fmt.Errorf("cannot render lore: %w", err)
	}
	return out.Bytes(), nil
}

// Path is where the lore of a date is written.
func Path(root, date string) string { return layout.LoreDay(root, date) }

// Write replaces the lore of a date atomically; writing the same day again
// gives the same file for the same events.
func Write(root, date string, text []byte) error {
	if _, _, err := Day(date); err != nil {
		return err
	}
	if err := atomicfile.MkdirAll(layout.Lore(root)); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(Path(root, date), text); err != nil {
		return fmt.Errorf("cannot write lore: %w", err)
	}
	return nil
}
