// Package process answers whether a recorded pid still names a live
// process, so that status never trusts a pid file alone.
package process
