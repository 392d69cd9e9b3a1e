// Package verdict judges, from the files a runtime folder holds, what an
// agent's runner is doing (Judge) and how a remote agent's seat looks
// (JudgeSeat). Its functions are pure, and the package is light, so that
// 'agentctl status' and mission control act on the same verdicts without
// status linking mission control's server.
package verdict
