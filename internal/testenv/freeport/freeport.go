// Package freeport finds loopback addresses for the servers a test starts,
// stops and starts again on a port it chose (a hub restarted on its
// store, a cluster whose nodes know each other's routes).
//
// A port the kernel hands out for :0 comes from its ephemeral range, from
// which every outgoing connection on the machine also takes its local
// port: between the pick and the bind, another process's connection took
// one (seen with two test runs on one machine). The ports here are drawn
// below that range, where only explicit binds go, and never twice in one
// process. It owns only that draw: it binds a port just long enough to
// see it free, and keeps nothing open. It is for tests only; the product
// never imports it.
package freeport

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// lowest is the lowest port drawn: above the ports services are commonly
// configured on.
const lowest = 10000

var (
	mu    sync.Mutex
	given = map[int]bool{}
)

// Addr returns a 127.0.0.1 address with a port nothing listens on now,
// below the ephemeral range and not returned before by this process.
func Addr(t testing.TB) string {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	top := ephemeralLow()
	for range 1000 {
		port := lowest + rand.IntN(top-lowest)
		if given[port] {
			continue
		}
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue // taken: draw again
		}
		l.Close()
		given[port] = true
		return l.Addr().String()
	}
	t.Fatalf("no free loopback port between %d and %d", lowest, top)
	return ""
}

// ephemeralLow is where the kernel's ephemeral ports begin: Linux says in
// /proc; Windows and macOS use the IANA range from 49152.
func ephemeralLow() int {
	if runtime.GOOS == "linux" {
		if data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
			if f := strings.Fields(string(data)); len(f) == 2 {
				if low, err := strconv.Atoi(f[0]); err == nil && low > lowest+1000 {
					return low
				}
			}
		}
		return 32768
	}
	return 49152
}
