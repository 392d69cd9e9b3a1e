// Package process answers questions about processes by pid: whether a
// recorded pid still names a live process (and, with StartTime, the same
// one), and whether a process group still runs. It lets status never trust
// a pid file alone and lets a driver never signal a stranger. It never
// delivers a signal or starts a process; it names a process for messages.
package process
