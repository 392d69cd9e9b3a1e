package agents

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"text/template"

	"github.com/agentctl/agentctl/internal/layout"
	"github.com/agentctl/agentctl/internal/sizecap"
	"github.com/agentctl/agentctl/mailbox"
	"github.com/agentctl/agentctl/projectboard"
)

// PromptData is what a prompt template sees.
type PromptData struct {
	Agent   string          // the agent being prompted
	Others  []string        // the other agents it can send to
	Message mailbox.Message // the message being answered
	// Task is the board task named by the message's task_id; nil when the
	// message names none or it is on no board.
	Task *projectboard.Task
	// TaskError says why a named task could not be read.
	TaskError string
	// Protocol explains the reply protocol; every built-in template ends
	// with it.
	Protocol string
}

// Protocol is the reply protocol as a prompt explains it. It shows the
// block indented rather than fenced, so an agent that echoes its prompt
// does not act on the example.
const Protocol = `How to reply: do the work, then end your reply with a fenced code block whose
info string is agentctl and whose body is one JSON object. Every key is
optional:
  "send":   a list of {"to", "body", "subject", "type", "priority"} messages
            ("to": "all" reaches every other agent);
  "board":  a list of {"id", "status", "owner", "notes"} task changes
            (status: todo, in_progress, review, blocked or done);
  "devlog": a line for your devlog.
For example (fence it with three backticks and the word agentctl):
    {"send": [{"to": "Agent-2", "subject": "review T-7", "body": "Parser split done; please review."}],
     "board": [{"id": "T-7", "status": "review", "owner": "Agent-2"}],
     "devlog": "Split the parser; sent to Agent-2 for review."}
Only the last such block counts. A Dream.OS report (Task:, Actions:,
Commit Message:, Status: lines) also works: Status: done completes the task.`

// builtinTemplates are the prompts of each message type; "default" serves
// every type without its own.
var builtinTemplates = map[string]string{
	"default": `You are {{.Agent}}, one agent of a swarm coordinated by agentctl{{if .Others}} (the others: {{join .Others ", "}}){{end}}.
You have a {{.Message.Type}} from {{.Message.From}}{{if ne (print .Message.Priority) "normal"}} ({{.Message.Priority}} priority){{end}}.
Message-ID: {{.Message.ID}}
From: {{.Message.From}}
Subject: {{or .Message.Subject "(none)"}}
{{- template "task" .}}
Message:
{{.Message.Body}}

{{.Protocol}}
`,
	"task": `You are {{.Agent}}, one agent of a swarm coordinated by agentctl{{if .Others}} (the others: {{join .Others ", "}}){{end}}.
{{.Message.From}} assigned you a task{{if ne (print .Message.Priority) "normal"}} ({{.Message.Priority}} priority){{end}}.
Message-ID: {{.Message.ID}}
From: {{.Message.From}}
Subject: {{or .Message.Subject "(none)"}}
{{- template "task" .}}
Message:
{{.Message.Body}}

When the task is finished, set its board status to done (or hand it on with
a message), and say what you did in the devlog line.

{{.Protocol}}
`,
	"board-task": `You are {{.Agent}}, one agent of a swarm coordinated by agentctl{{if .Others}} (the others: {{join .Others ", "}}){{end}}.
You took the next task from the project board; it is now in_progress and yours.
Message-ID: {{.Message.ID}}
Subject: {{or .Message.Subject "(none)"}}
{{- template "task" .}}

When the task is finished, set its board status to done (or to review, or
hand it on with a message), and say what you did in the devlog line.

{{.Protocol}}
`,
	"resume": `{{.Message.Body}}
`,
}

// taskPart renders the board task a message links to.
const taskPart = `{{define "task"}}
{{- if .Task}}
Board task: {{.Task.ID}} · {{.Task.Title}}
Status: {{.Task.Status}}{{if .Task.Owner}} · owner {{.Task.Owner}}{{end}}{{if .Task.Priority}} · priority {{.Task.Priority}}{{end}}{{if .Task.DependsOn}} · depends on {{join .Task.DependsOn ", "}}{{end}}
{{- if .Task.Notes}}
Notes: {{.Task.Notes}}{{end}}
{{- else if .Message.TaskID}}
Board task: {{.Message.TaskID}} ({{or .TaskError "not on any board"}})
{{- end}}
{{- end}}`

var funcs = template.FuncMap{"join": strings.Join, "upper": strings.ToUpper, "lower": strings.ToLower}

// typeName keeps message types that can name a template file.
var typeName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,39}$`) })

// Templates finds the template of a message type: <dir>/<type>.tmpl, then
// <dir>/default.tmpl, then the built-in one of the type, then the built-in
// default. Files are read at every prompt, so an edit applies to the next
// message without a restart.
type Templates struct {
	Dir string
}

// Render returns the prompt for d.
func (t Templates) Render(d PromptData) (string, error) {
	p, err := t.render(d)
	return p.Text, err
}

// renderedPrompt is a rendered prompt and whether it asks the agent to
// end its reply with an agentctl block.
type renderedPrompt struct {
	Text         string
	AsksForBlock bool
}

// agentctlFence finds a template line that opens an agentctl block: a
// template of one's own that shows the block asks for it as surely as one
// that carries Protocol.
var agentctlFence = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("(?mi)^[ \t]{0,3}(```+|~~~+)[ \t]*agentctl\\b") })

// render renders d and judges whether the prompt asks for the block: it
// does when it carries the reply protocol (every built-in template ends
// with it) or its template shows an agentctl fence. A template that asks
// for neither, such as the built-in resume, is not held to the block.
func (t Templates) render(d PromptData) (renderedPrompt, error) {
	name, text, err := t.lookup(strings.ToLower(d.Message.Type))
	if err != nil {
		return renderedPrompt{}, err
	}
	p, err := parseTemplate(name, text)
	if err != nil {
		return renderedPrompt{}, err
	}
	if d.Protocol == "" {
		d.Protocol = Protocol
	}
	var buf bytes.Buffer
	if err := p.tmpl.Execute(&buf, d); err != nil {
		return renderedPrompt{}, fmt.Errorf("cannot render prompt template %s: %w", name, err)
	}
	out := buf.String()
	return renderedPrompt{Text: out, AsksForBlock: strings.Contains(out, d.Protocol) || p.showsFence}, nil
}

// parsedTemplate is a template ready to execute, and whether its text
// shows an agentctl fence.
type parsedTemplate struct {
	tmpl       *template.Template
	showsFence bool
}

// parsedTemplates keeps the templates parsed so far by name and text, so
// that a message costs a read of its template file, not a parse: parsing
// was a twentieth of a runner's CPU a message. Edits make new entries; the
// few a runner meets stay well under maxParsedTemplates, and past it the
// cache starts again.
var parsedTemplates = struct {
	sync.Mutex
	byText map[[2]string]parsedTemplate
}{byText: map[[2]string]parsedTemplate{}}

const maxParsedTemplates = 64

// parseTemplate parses text, the template called name, with the task part
// every template may use.
func parseTemplate(name, text string) (parsedTemplate, error) {
	key := [2]string{name, text}
	parsedTemplates.Lock()
	p, ok := parsedTemplates.byText[key]
	parsedTemplates.Unlock()
	if ok {
		return p, nil
	}
	tmpl, err := template.New(name).Funcs(funcs).Option("missingkey=error").Parse(taskPart)
	if err == nil {
		tmpl, err = tmpl.Parse(text)
	}
	if err != nil {
		return parsedTemplate{}, fmt.Errorf("cannot parse prompt template %s: %w", name, err)
	}
	p = parsedTemplate{tmpl: tmpl, showsFence: agentctlFence().MatchString(text)}
	parsedTemplates.Lock()
	if len(parsedTemplates.byText) >= maxParsedTemplates {
		clear(parsedTemplates.byText)
	}
	parsedTemplates.byText[key] = p
	parsedTemplates.Unlock()
	return p, nil
}

func (t Templates) lookup(typ string) (name, text string, err error) {
	var candidates []string
	if typeName().MatchString(typ) {
		candidates = append(candidates, typ)
	}
	candidates = append(candidates, "default")
	if t.Dir != "" {
		for _, c := range candidates {
			path := filepath.Join(t.Dir, c+layout.TemplateSuffix)
			data, err := sizecap.ReadFile(path)
			if err == nil {
				return path, string(data), nil
			}
			if !errors.Is(err, fs.ErrNotExist) {
				return "", "", fmt.Errorf("cannot read prompt template: %w", err)
			}
		}
	}
	for _, c := range candidates {
		if text, ok := builtinTemplates[c]; ok {
			return "built-in " + c, text, nil
		}
	}
	panic("no built-in default template")
}

// BuiltinTemplate returns the built-in template of a type, for users who
// want to start their own from it.
func BuiltinTemplate(typ string) (string, bool) {
	t, ok := builtinTemplates[typ]
	return t, ok
}
