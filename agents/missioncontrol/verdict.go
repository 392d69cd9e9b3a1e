package missioncontrol

import "github.com/agentctl/agentctl/agents/missioncontrol/verdict"

// Runner and Seat are the verdicts on an agent's runner and seat that a
// Snapshot shows (package verdict, which status shares).
type (
	Runner = verdict.Runner
	Seat   = verdict.Seat
)
