package agents

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"unicode"
)

// Actions is what a reply asks agentctl to do, from the last fenced block
// whose info string is "agentctl":
//
//	```agentctl
//	{"send": [{"to": "Agent-2", "subject": "review", "body": "Please review T-7"}],
//	 "board": [{"id": "T-7", "status": "review", "owner": "Agent-2"}],
//	 "devlog": "Parser done, handed to Agent-2 for review"}
//	```
type Actions struct {
	Send   []Send        `json:"send,omitempty"`
	Board  []BoardChange `json:"board,omitempty"`
	Devlog string        `json:"devlog,omitempty"`
	// Refused lists each part of the block that could not be used, and
	// why; everything else in the block still applies.
	Refused []string `json:"refused,omitempty"`
}

// Send is one message the reply asks to send. To may be "all".
type Send struct {
	To       string `json:"to"`
	Body     string `json:"body"`
	Subject  string `json:"subject,omitempty"`
	Type     string `json:"type,omitempty"`
	Priority string `json:"priority,omitempty"`
	TaskID   string `json:"task_id,omitempty"`
	// Index is the item's place in the block, which names it for good.
	Index int `json:"-"`
}

// BoardChange changes one board task; absent keys are left as they are.
type BoardChange struct {
	ID     string  `json:"id"`
	Status *string `json:"status,omitempty"`
	Owner  *string `json:"owner,omitempty"`
	Notes  *string `json:"notes,omitempty"`
	Index  int     `json:"-"`
}

// Report is a Dream.OS completion report found in a reply:
//
//	Task: T-7 parser cleanup
//	Actions:
//	- split the tokenizer
//	Commit Message: refactor: split tokenizer
//	Status: done
//
// Its receipt keeps it as a receipt.Report, which has the same fields, so
// that a change here that receipts would not read fails to compile.
type Report struct {
	Task          string   `json:"task,omitempty"`
	Actions       []string `json:"actions,omitempty"`
	CommitMessage string   `json:"commit_message,omitempty"`
	Status        string   `json:"status,omitempty"`
}

// Done reports whether the report says the task is finished.
func (r *Report) Done() bool {
	if r == nil {
		return false
	}
	// Dream.OS wrote "✅ COMPLETE", "**Done**.", "complete: merged".
	s := strings.ToLower(strings.TrimRightFunc(strings.TrimLeftFunc(r.Status, notLetter), func(r rune) bool { return notLetter(r) && r != ' ' }))
	s = strings.TrimSpace(s)
	for _, w := range []string{"done", "complete", "completed"} {
		if s == w || strings.HasPrefix(s, w+" ") || strings.HasPrefix(s, w+":") {
			return true
		}
	}
	return false
}

func notLetter(r rune) bool { return !unicode.IsLetter(r) }

// Parsed is everything agentctl reads out of a reply.
type Parsed struct {
	// Actions is nil when the reply has no agentctl block, or one with
	// nothing usable in it.
	Actions *Actions `json:"actions,omitempty"`
	// BlockError says why the last agentctl block could not be used at
	// all: it is not a JSON object, or it was cut off.
	BlockError string  `json:"block_error,omitempty"`
	Report     *Report `json:"report,omitempty"`
}

// Answered reports whether the reply used the reply protocol at all: an
// agentctl block, usable or not, or a Dream.OS report. A reply read from a
// chat's rendering, which drops Markdown fences, has neither.
func (p Parsed) Answered() bool {
	return p.Actions != nil || p.BlockError != "" || p.Report != nil
}

// fence matches the opening line of a fenced block and captures the fence
// and the info string.
var fence = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("^[ \t]{0,3}(```+|~~~+)[ \t]*([^`\n]*)$") })

// ParseReply reads the reply protocol out of an agent's reply.
func ParseReply(reply string) Parsed {
	var p Parsed
	body, found, err := lastAgentctlBlock(reply)
	if err == nil && found {
		var a Actions
		err = decodeActions(body, &a)
		if err == nil {
			p.Actions = &a
		}
	}
	if err != nil {
		p.BlockError = err.Error()
	}
	p.Report = parseReport(reply)
	return p
}

// lastAgentctlBlock returns the body of the last fenced block with the info
// string agentctl. An opened block that never closes is an error: the
// reply was probably cut off.
func lastAgentctlBlock(reply string) (body string, found bool, err error) {
	lines := strings.Split(strings.ReplaceAll(reply, "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		m := fence().FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		open, info := m[1], strings.TrimSpace(m[2])
		end := -1
		for j := i + 1; j < len(lines); j++ {
			t := strings.TrimSpace(lines[j])
			if strings.HasPrefix(t, open[:3]) && strings.Trim(t, open[:1]) == "" && len(t) >= len(open) {
				end = j
				break
			}
		}
		isOurs := strings.EqualFold(strings.Fields(info + " x")[0], "agentctl")
		if end < 0 {
			if isOurs {
				return "", true, errors.New("the agentctl block is not closed (the reply may have been cut off)")
			}
			break
		}
		if isOurs {
			body, found, err = strings.Join(lines[i+1:end], "\n"), true, nil
		}
		i = end
	}
	return body, found, err
}

// decodeActions reads the block item by item: an item that cannot be used
// is refused with its reason in a.Refused and the rest still applies. Only
// a block that is not a JSON object at all is refused whole.
func decodeActions(body string, a *Actions) error {
	dec := json.NewDecoder(strings.NewReader(body))
	var top map[string]json.RawMessage
	if err := dec.Decode(&top); err != nil || top == nil {
		return fmt.Errorf("the agentctl block is not a JSON object with send, board and devlog: %v", errOr(err, "it is null"))
	}
	if strings.TrimSpace(body[dec.InputOffset():]) != "" {
		a.Refused = append(a.Refused, "the text after the block's JSON object was ignored")
	}
	keys := make([]string, 0, len(top))
	for k := range top {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		raw := top[k]
		switch k {
		case "send":
			for i, item := range items(raw, k, &a.Refused) {
				var s Send
				err := strictDecode(item, &s)
				switch {
				case err != nil:
					a.Refused = append(a.Refused, fmt.Sprintf("send[%d]: %v", i, err))
				case strings.TrimSpace(s.To) == "":
					a.Refused = append(a.Refused, fmt.Sprintf("send[%d]: \"to\" is missing", i))
				case strings.TrimSpace(s.Body) == "":
					a.Refused = append(a.Refused, fmt.Sprintf("send[%d] to %s: \"body\" is empty", i, s.To))
				default:
					s.Index = i
					a.Send = append(a.Send, s)
				}
			}
		case "board":
			for i, item := range items(raw, k, &a.Refused) {
				var b BoardChange
				err := strictDecode(item, &b)
				switch {
				case err != nil:
					a.Refused = append(a.Refused, fmt.Sprintf("board[%d]: %v", i, err))
				case strings.TrimSpace(b.ID) == "":
					a.Refused = append(a.Refused, fmt.Sprintf("board[%d]: \"id\" is missing", i))
				case b.Status == nil && b.Owner == nil && b.Notes == nil:
					a.Refused = append(a.Refused, fmt.Sprintf("board[%d] (%s): nothing to change; give status, owner or notes", i, b.ID))
				default:
					b.Index = i
					a.Board = append(a.Board, b)
				}
			}
		case "devlog":
			if err := json.Unmarshal(raw, &a.Devlog); err != nil {
				a.Refused = append(a.Refused, "devlog: not a string")
			}
		default:
			a.Refused = append(a.Refused, fmt.Sprintf("unknown key %q was ignored (the block takes send, board and devlog)", k))
		}
	}
	return nil
}

// items reads a list of the block; one object stands for a list of one.
func items(raw json.RawMessage, key string, refused *[]string) []json.RawMessage {
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err == nil {
		return list
	}
	if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] == '{' {
		return []json.RawMessage{raw}
	}
	if string(bytes.TrimSpace(raw)) != "null" {
		*refused = append(*refused, fmt.Sprintf("%s: not a list of objects", key))
	}
	return nil
}

func strictDecode(raw json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("not usable: %v", err)
	}
	return nil
}

func errOr(err error, text string) string {
	if err != nil {
		return err.Error()
	}
	return text
}

var reportKey = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[\s>*_#-]*(Task|Actions|Commit Message|Status)[*_]*\s*:[*_]*\s*(.*)$`)
})

// parseReport finds the Dream.OS report lines; it needs Task: or Actions:
// and Status: to count as a report, so a passing "Status:" in prose does
// not.
func parseReport(reply string) *Report {
	var r Report
	var inActions, sawTask bool
	for _, line := range strings.Split(strings.ReplaceAll(reply, "\r\n", "\n"), "\n") {
		if m := reportKey().FindStringSubmatch(line); m != nil {
			inActions = false
			v := strings.TrimSpace(m[2])
			switch m[1] {
			case "Task":
				r.Task, sawTask = v, true
			case "Actions":
				inActions, sawTask = true, true
				if v != "" {
					r.Actions = append(r.Actions, v)
				}
			case "Commit Message":
				r.CommitMessage = v
			case "Status":
				r.Status = v
			}
			continue
		}
		t := strings.TrimSpace(line)
		if inActions {
			if item, ok := cutBullet(t); ok {
				r.Actions = append(r.Actions, item)
				continue
			}
			if t != "" {
				inActions = false
			}
		}
	}
	if !sawTask || r.Status == "" {
		return nil
	}
	return &r
}

func cutBullet(t string) (string, bool) {
	for _, p := range []string{"- ", "* ", "• "} {
		if rest, ok := strings.CutPrefix(t, p); ok {
			return strings.TrimSpace(rest), true
		}
	}
	if i := strings.IndexAny(t, ".)"); i > 0 && i <= 3 && strings.Trim(t[:i], "0123456789") == "" && len(t) > i+1 {
		return strings.TrimSpace(t[i+1:]), true
	}
	return "", false
}
