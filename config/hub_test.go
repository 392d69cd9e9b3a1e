package config

import (
	"strings"
	"testing"
)

func TestHubSectionParses(t *testing.T) {
	data := `
hub:
  machine: desk-1
  listen: 192.168.1.10:4222
  url: nats://desk-1:4222, tls://desk-2:4222
  replicas: 3
  cluster: {name: swarm, listen: 0.0.0.0:6222, routes: [nats://desk-2:6222]}
  tls: {cert: hub/tls/cert.pem, key: hub/tls/key.pem, ca: /etc/agentctl/ca.pem}
  user: swarm
  password_file: hub/password
agents:
  - {name: Agent-1}
  - {name: Agent-2, machine: desk-1}
  - {name: Agent-5, machine: laptop-2}
  - {name: Agent-6, machine: laptop_3.lan}
`
	c, err := Parse("agentctl.yaml", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	h := c.Hub
	if h.Machine != "desk-1" || h.Listen != "192.168.1.10:4222" || h.Replicas != 3 || h.User != "swarm" ||
		h.Cluster.Name != "swarm" || len(h.Cluster.Routes) != 1 || h.TLS.CA != "/etc/agentctl/ca.pem" {
		t.Errorf("hub = %+v", h)
	}
	if got := URLs(h.URL); strings.Join(got, " ") != "nats://desk-1:4222 tls://desk-2:4222" {
		t.Errorf("URLs(%q) = %q", h.URL, got)
	}
	// Files resolve against the runtime root unless absolute.
	if got := h.File("/rt", h.PasswordFile); got != "/rt/hub/password" {
		t.Errorf("password file = %q", got)
	}
	if got := h.File("/rt", h.TLS.CA); got != "/etc/agentctl/ca.pem" {
		t.Errorf("ca = %q", got)
	}
	if got := h.File("/rt", ""); got != "" {
		t.Errorf("an unset file resolves to %q", got)
	}
	// An agent on the hub's machine, or on none, is local.
	if got := strings.Join(c.RemoteAgents(), ","); got != "Agent-5,Agent-6" {
		t.Errorf("RemoteAgents = %s", got)
	}
	for _, a := range c.Agents {
		if want := a.Name == "Agent-5" || a.Name == "Agent-6"; c.Remote(a) != want {
			t.Errorf("Remote(%s) = %v", a.Name, !want)
		}
	}
}

func TestHubDefaultsKeepEveryAgentLocal(t *testing.T) {
	c, err := Parse("agentctl.yaml", []byte("agents:\n  - {name: Agent-1}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Hub.Listen != DefaultHubListen || c.Hub.Store != DefaultHubStore || c.Hub.Replicas != 1 {
		t.Errorf("hub defaults = %+v", c.Hub)
	}
	if got := c.RemoteAgents(); got != nil {
		t.Errorf("RemoteAgents = %v, want none", got)
	}
}

func TestHubSectionRefusesWhatCannotWork(t *testing.T) {
	agents := "agents:\n  - {name: Agent-1}\n"
	tests := map[string]string{
		"hub: {replicas: 0}\n":                                         "hub.replicas: 0 is not between 1 and 5",
		"hub: {replicas: 6}\n":                                         "hub.replicas: 6 is not between 1 and 5",
		"hub: {listen: '4222'}\n":                                      `hub.listen: "4222" is not host:port`,
		"hub: {cluster: {listen: cluster-1}}\n":                        `hub.cluster.listen: "cluster-1" is not host:port`,
		"hub: {url: 'http://desk-1:4222'}\n":                           `hub.url: "http://desk-1:4222": scheme "http" is not nats, tls, ws or wss`,
		"hub: {nats: 'nats://n-1:4222,desk-2'}\n":                      `hub.nats: "desk-2" is neither a nats:// URL nor host:port`,
		"hub: {url: 'nats://'}\n":                                      `hub.url: "nats://" names no host`,
		"hub: {tls: {cert: c.pem}}\n":                                  "hub.tls: cert and key go together",
		"hub: {tls: {key: k.pem}}\n":                                   "hub.tls: cert and key go together",
		"hub: {user: swarm}\n":                                         "hub: user and password_file go together",
		"hub: {password_file: pw}\n":                                   "hub: user and password_file go together",
		"hub: {machine: 'desk 1'}\n":                                   `hub.machine: "desk 1" is not a machine name`,
		"hub: {machine: ../x}\n":                                       `hub.machine: "../x" is not a machine name`,
		"hub: {machine: m1}\nagents:\n  - {name: A, machine: 'm/2'}\n": `agents[0] (A): machine "m/2" is not a machine name`,
		"agents:\n  - {name: A}\n  - {name: B, machine: m2}\n":         `agents[1] (B): machine "m2" is set but hub.machine is not`,
	}
	for data, want := range tests {
		if !strings.Contains(data, "agents:") {
			data += agents
		}
		_, err := Parse("agentctl.yaml", []byte(data))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want an error containing %q", data, err, want)
		}
	}
	// What NATS clients dial is accepted: the four schemes, and host:port.
	for _, u := range []string{"nats://h:4222", "tls://h:4222", "ws://h:8080", "wss://h:443", "h:4222", "nats://a:1, nats://b:2"} {
		if _, err := Parse("agentctl.yaml", []byte("hub: {url: '"+u+"'}\n"+agents)); err != nil {
			t.Errorf("hub.url %q: %v", u, err)
		}
	}
}

// The hub section that init writes, commented out, parses once uncommented.
func TestInitialHubSectionParsesUncommented(t *testing.T) {
	text := string(Initial([]string{"Agent-1"}))
	start := strings.Index(text, "# hub:\n")
	if start < 0 {
		t.Fatalf("the initial file has no hub section:\n%s", text)
	}
	var lines []string
	for _, l := range strings.Split(text[start:], "\n") {
		if l == "#" {
			break
		}
		l = strings.TrimPrefix(l, "# ")
		if rest, ok := strings.CutPrefix(l, "  # "); ok {
			l = "  " + rest
		}
		lines = append(lines, l)
	}
	data := strings.Join(lines, "\n") + "\nagents:\n  - {name: Agent-1}\n  - {name: Agent-5, machine: laptop-2}\n"
	c, err := Parse("agentctl.yaml", []byte(data))
	if err != nil {
		t.Fatalf("%v:\n%s", err, data)
	}
	if c.Hub.Machine != "desk-1" || c.Hub.NATS == "" || c.Hub.Cluster.Name != "swarm" || c.Hub.Store != DefaultHubStore {
		t.Errorf("hub = %+v", c.Hub)
	}
	if got := c.RemoteAgents(); len(got) != 1 || got[0] != "Agent-5" {
		t.Errorf("RemoteAgents = %v", got)
	}
}
