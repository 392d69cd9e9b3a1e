// Package desktopname names the desktop control a build of package cursor
// has (Desktop), for 'agentctl version': apart from cursor, so that
// printing the version does not link the desktop drivers.
package desktopname
