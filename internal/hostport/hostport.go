// Package hostport splits "host:port" as package net's SplitHostPort
// does, for the packages that check addresses without dialing them
// (config, loopback). Package net itself, built with cgo, makes every
// program that links it load the C library at start, which 'agentctl
// status' and 'send' would pay for on every run.
//
// It owns that split only: it never resolves a name, dials or listens.
package hostport

import (
	"errors"
	"fmt"
	"strings"
)

// Split splits hostport, "host:port", "[host]:port" or ":port", into
// host and port, by net.SplitHostPort's rules: the port may be empty, a
// literal IPv6 host must be in brackets.
func Split(hostport string) (host, port string, err error) {
	fail := func(why string) (string, string, error) {
		if hostport == "" {
			return "", "", errors.New(why)
		}
		return "", "", fmt.Errorf("address %s: %s", hostport, why)
	}
	i := strings.LastIndexByte(hostport, ':')
	if i < 0 {
		return fail("missing port in address")
	}
	j, k := 0, 0
	if hostport[0] == '[' {
		end := strings.IndexByte(hostport, ']')
		if end < 0 {
			return fail("missing ']' in address")
		}
		switch end + 1 {
		case len(hostport):
			return fail("missing port in address")
		case i: // "[host]:port"
		default:
			if hostport[end+1] == ':' {
				return fail("too many colons in address")
			}
			return fail("missing port in address")
		}
		host = hostport[1:end]
		j, k = 1, end+1
	} else {
		host = hostport[:i]
		if strings.IndexByte(host, ':') >= 0 {
			return fail("too many colons in address")
		}
	}
	if strings.IndexByte(hostport[j:], '[') >= 0 {
		return fail("unexpected '[' in address")
	}
	if strings.IndexByte(hostport[k:], ']') >= 0 {
		return fail("unexpected ']' in address")
	}
	return host, hostport[i+1:], nil
}
