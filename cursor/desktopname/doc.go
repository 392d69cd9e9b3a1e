// Package desktopname names the desktop control a build of package cursor
// has (Desktop), for 'agentctl version': apart from cursor, so that
// printing the version does not link the desktop drivers.
//
// It owns that one constant, chosen by the same build tags as cursor's
// desktop control; it imports nothing and does nothing when the program
// runs.
package desktopname
