package missioncontrol

import (
	"time"

	"github.com/agentctl/agentctl/agents/cost"
)

// Snapshot is everything mission control shows at one moment. It holds
// absolute times only, never ages, so that an idle runtime gives the same
// snapshot again and nothing is sent to anyone; views compute ages.
type Snapshot struct {
	Root       string   `json:"root"`
	StallAfter float64  `json:"stall_after_s"`
	Agents     []Agent  `json:"agents"`
	People     []Person `json:"people"`
	Columns    []Column `json:"columns"`
	Threads    []Thread `json:"threads"`
	Dead       []Letter `json:"dead"`
	Problems   []string `json:"problems,omitempty"`
	Locks      []Lock   `json:"locks,omitempty"`
	// Spent is what the swarm's turns used today (UTC), from the cost
	// ledger.
	Spent cost.Totals `json:"spent"`
}

// Agent is one agent's tile.
type Agent struct {
	Name string `json:"name"`
	Runner
	// Queue counts pending messages by priority.
	Queue      map[string]int `json:"queue"`
	Pending    int            `json:"pending"`
	Processing int            `json:"processing"`
	Done       int            `json:"done"`
	Dead       int            `json:"dead"`
	LastLog    string         `json:"last_log,omitempty"`
	LastLogAt  *time.Time     `json:"last_log_at,omitempty"`
	HoldsLock  string         `json:"holds_lock,omitempty"`
	// Seat is where a remote agent's turns are taken; nil for an agent
	// of the hub's machine, whose runner is all there is to show.
	Seat    *Seat  `json:"seat,omitempty"`
	Problem string `json:"problem,omitempty"`
	// Today is what its turns used today (UTC); zero when none reported.
	Today cost.Totals `json:"today"`
	// TodayBrief is Today for a cell: dollars, or tokens where unpriced.
	TodayBrief string `json:"today_brief"`
}

// Person is a person's mailbox: what waits for their answer.
type Person struct {
	Name string `json:"name"`
	// Waiting is the first of the pending messages, in the order they are
	// worked; Pending and Dead count all.
	Waiting []Letter `json:"waiting"`
	Pending int      `json:"pending"`
	Dead    int      `json:"dead"`
	Problem string   `json:"problem,omitempty"`
}

// Letter is a message as the views show it.
type Letter struct {
	Mailbox  string `json:"mailbox"`
	ID       string `json:"id"`
	Ref      string `json:"ref"` // what retry and drop accept: the id, or the file name of an unreadable one
	From     string `json:"from"`
	To       string `json:"to"`
	Type     string `json:"type,omitempty"`
	Priority string `json:"priority,omitempty"`
	Subject  string `json:"subject"`
	Body     string `json:"body,omitempty"`
	TaskID   string `json:"task_id,omitempty"`
	ThreadID string `json:"thread_id,omitempty"`
	ReplyTo  string `json:"reply_to,omitempty"`
	State    string `json:"state"`
	Outcome  string `json:"outcome,omitempty"`
	Reason   string `json:"reason,omitempty"`
	// Notes are the driver's notes on the turn (a reply read from the
	// page's rendering, …), from the receipt.
	Notes       []string   `json:"notes,omitempty"`
	CreatedAt   time.Time  `json:"created_at"`
	ClaimedAt   *time.Time `json:"claimed_at,omitempty"`
	CompletedAt *time.Time `json:"completed_at,omitempty"`

	file string // relative to its mailbox folder: the order of letters alike in all else
}

// Column is one status of the board.
type Column struct {
	Status string `json:"status"`
	Tasks  []Task `json:"tasks"`
}

// Task is a board task and the messages that touched it.
type Task struct {
	ID       string   `json:"id"`
	Title    string   `json:"title"`
	Owner    string   `json:"owner,omitempty"`
	Priority string   `json:"priority,omitempty"`
	Board    string   `json:"board"`
	Messages []Letter `json:"messages,omitempty"` // oldest first, without their bodies
}

// Thread is a conversation: messages linked by thread_id, oldest first.
type Thread struct {
	ID      string   `json:"id"`
	Subject string   `json:"subject"`
	Hops    []Letter `json:"hops"`
}

// Lock is a desktop input lock and who holds it.
type Lock struct {
	Lock  string    `json:"lock"`
	Agent string    `json:"agent,omitempty"`
	PID   int       `json:"pid"`
	Since time.Time `json:"since"`
}
