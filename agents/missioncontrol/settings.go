package missioncontrol

import (
	"slices"
	"time"
)

// Settings are what mission control needs of a runtime's settings, as
// plain values: who has a mailbox, who is remote, when a turn counts as
// stalled, and how the mailboxes are watched.
type Settings struct {
	Agents []string
	People []string
	// Remote names the machine of each agent that takes its turns on
	// another machine than the hub's.
	Remote map[string]string
	// StallAfter: a turn running longer than this while messages wait
	// shows the agent stalled.
	StallAfter time.Duration
	// StaleAfter: a runner that seems up but has not written its
	// heartbeat for longer than this shows silent.
	StaleAfter time.Duration
	// Poll, when set, says the mailboxes are polled this often rather than
	// watched (network and synced folders send no events): the feed reads
	// as often.
	Poll time.Duration
	// ConfigFile is the settings file's name in the runtime folder: read
	// at start, its changes show nothing.
	ConfigFile string
}

// mailboxNames are the agents' and the people's, in that order.
func (s Settings) mailboxNames() []string { return append(slices.Clone(s.Agents), s.People...) }

func (s Settings) isPerson(name string) bool { return slices.Contains(s.People, name) }
