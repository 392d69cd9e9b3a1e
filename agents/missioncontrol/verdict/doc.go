// Package verdict judges, from the files a runtime folder holds, what an
// agent's runner is doing (Judge) and how a remote agent's seat looks
// (JudgeSeat). Its functions are pure, and the package is light, so that
// 'agentctl status' and mission control act on the same verdicts without
// status linking mission control's server.
//
// It owns those judgements and nothing else: it opens no file and writes
// nothing; its callers hand it what they read (status.json as a
// mailbox.Status, hub/seats.json as hubseats.Seats) and whether a
// recorded process still lives.
package verdict
