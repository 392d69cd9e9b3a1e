package freeport

import (
	"net"
	"strconv"
	"testing"
)

func TestAddrIsFreeBelowTheEphemeralRangeAndNeverTwice(t *testing.T) {
	seen := map[string]bool{}
	for range 50 {
		addr := Addr(t)
		if seen[addr] {
			t.Fatalf("%s given twice", addr)
		}
		seen[addr] = true
		_, p, err := net.SplitHostPort(addr)
		if err != nil {
			t.Fatal(err)
		}
		port, _ := strconv.Atoi(p)
		if port < lowest || port >= ephemeralLow() {
			t.Errorf("port %d outside [%d, %d)", port, lowest, ephemeralLow())
		}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatalf("%s is not free: %v", addr, err)
		}
		l.Close()
	}
}
