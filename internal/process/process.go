// Package process answers whether a recorded pid still names a live
// process, and the same one (StartTime), so that status and lock holders
// never trust a pid file alone; and it names a process for messages.
package process
