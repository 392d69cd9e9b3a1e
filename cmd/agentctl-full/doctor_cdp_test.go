package main

import (
	"strings"
	"testing"
	"time"

	"github.com/agentctl/agentctl/config"
)

func TestDoctorWarnsOfACDPSeatWithoutBusyElement(t *testing.T) {
	seat := config.CDP{Endpoint: "http://127.0.0.1:9222", Busy: config.CDPNoBusy, Quiet: config.Duration(8 * time.Second)}
	c := noBusyCheck("Agent-1", seat.Resolved())
	if c.err != nil || !strings.Contains(c.warn, "cdp.quiet (8s)") || !strings.Contains(c.hint, "agentctl calibrate Agent-1 --cdp http://127.0.0.1:9222") {
		t.Fatalf("check %+v", c)
	}
}
