package config

import (
	"strings"
	"testing"
)

func TestCDPSeatsAreReadAndHeldToLoopback(t *testing.T) {
	cfg, err := Parse("agentctl.yaml", []byte(`agents:
  - name: Agent-1
    driver: cdp
    cdp:
      endpoint: http://127.0.0.1:9222
      target: 'Agent-1.*Cursor'
      composer: '#composer'
`))
	if err != nil {
		t.Fatal(err)
	}
	seat := cfg.Agents[0].CDP
	if err := seat.Ready(); err != nil {
		t.Fatal(err)
	}
	r := seat.Resolved()
	if r.Composer != "#composer" || r.Reply != CursorProfile().Reply || r.Busy != CursorProfile().Busy || r.Quiet.D() != DefaultCDPQuiet {
		t.Fatalf("resolved seat %+v", r)
	}
	for _, bad := range []struct{ yaml, says string }{
		{"endpoint: http://0.0.0.0:9222", "not on loopback"},
		{"endpoint: http://192.168.1.5:9222", "not on loopback"},
		{"endpoint: ws://127.0.0.1:9222", "is not http://127.0.0.1:PORT"},
		{"endpoint: http://127.0.0.1", "is not http://127.0.0.1:PORT"},
		{"target: '(['", "cdp.target: not a regular expression"},
		{"busy: none", "cdp.quiet: must be set when cdp.busy is \"none\""},
	} {
		_, err := Parse("agentctl.yaml", []byte("agents:\n  - name: Agent-1\n    driver: cdp\n    cdp:\n      "+bad.yaml+"\n"))
		if err == nil || !strings.Contains(err.Error(), bad.says) {
			t.Errorf("%s: err = %v, want it to say %q", bad.yaml, err, bad.says)
		}
	}
	if err := (CDP{Endpoint: "http://[::1]:9222"}).validate(); err != nil {
		t.Errorf("IPv6 loopback refused: %v", err)
	}
	if err := (CDP{Endpoint: "http://127.0.0.1:9222"}).Ready(); err == nil {
		t.Error("a seat without a target is ready")
	}
	_, err = Parse("agentctl.yaml", []byte("agents:\n  - name: Agent-1\n    driver: devtools\n"))
	if err == nil || !strings.Contains(err.Error(), "not gui, exec, cdp or acp") {
		t.Errorf("unknown driver: %v", err)
	}
}

func TestCDPSeatWithoutBusyElementKeepsItsQuiet(t *testing.T) {
	cfg, err := Parse("agentctl.yaml", []byte("agents:\n  - name: Agent-1\n    driver: cdp\n    cdp:\n      busy: none\n      quiet: 8s\n"))
	if err != nil {
		t.Fatal(err)
	}
	if r := cfg.Agents[0].CDP.Resolved(); r.Busy != CDPNoBusy || r.Quiet.D().String() != "8s" {
		t.Fatalf("resolved seat %+v: the profile's busy selector or the default quiet took over", r)
	}
}
