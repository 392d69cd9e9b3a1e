package config

import (
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/agentctl/agentctl/internal/hostport"
	"github.com/agentctl/agentctl/internal/layout"
)

// Hub is how the machines of a swarm meet: one of them, the hub, keeps the
// runtime folder (boards, devlogs, lore, every mailbox and its history) and
// runs `agentctl hub`; agents whose Machine is another machine take their
// turns there with `agentctl run AGENT --hub URL`. Messages, turns and
// replies cross over NATS JetStream, the server embedded in `agentctl hub`
// unless NATS names an external cluster.
type Hub struct {
	// Machine names the hub's machine; agents without a machine, or with
	// this one, run on it. "" means every agent runs on this machine.
	Machine string `yaml:"machine,omitempty"`
	// Listen is where the embedded server accepts the other machines:
	// loopback unless credentials are set (never open to anyone).
	Listen string `yaml:"listen,omitempty"`
	// URL is how the other machines reach the hub (several,
	// comma-separated, for a cluster): what they pass to `run --hub`, and
	// what status and doctor name in their hints.
	URL string `yaml:"url,omitempty"`
	// NATS, when set, is an external NATS cluster (comma-separated URLs):
	// `agentctl hub` then embeds no server and connects to it.
	NATS string `yaml:"nats,omitempty"`
	// Store is the embedded server's JetStream folder, relative to the
	// runtime root unless absolute.
	Store string `yaml:"store,omitempty"`
	// Replicas is how many servers of a cluster keep each stream.
	Replicas int `yaml:"replicas,omitempty"`
	// Cluster joins the embedded server to the servers of other machines.
	Cluster HubCluster `yaml:"cluster,omitempty"`

	TLS HubTLS `yaml:"tls,omitempty"`
	// User and PasswordFile: the swarm's user, accepted by the hub and
	// presented by every machine. The file holds the password alone and
	// must not be readable by other users.
	User         string `yaml:"user,omitempty"`
	PasswordFile string `yaml:"password_file,omitempty"`
	// NKeySeedFile holds the nkey seed ("SU...") machines sign with; the
	// hub accepts its public key, and NKey (a "U..." public key) when the
	// hub has no seed of its own.
	NKeySeedFile string `yaml:"nkey_seed_file,omitempty"`
	NKey         string `yaml:"nkey,omitempty"`
	// CredsFile is a NATS .creds file, for external clusters run with
	// accounts and JWTs.
	CredsFile string `yaml:"creds_file,omitempty"`
	// Credentials is this machine's nkey seed file for the embedded hub,
	// as `agentctl hub credentials MACHINE` printed it on the hub's
	// machine; unset, hub/credentials/MACHINE.nk under the runtime.
	Credentials string `yaml:"credentials,omitempty"`
}

// HubCluster is the embedded server's place in a cluster of servers.
type HubCluster struct {
	Name   string   `yaml:"name,omitempty"`
	Listen string   `yaml:"listen,omitempty"`
	Routes []string `yaml:"routes,omitempty"`
}

// HubTLS names PEM files: the hub serves Cert and Key and, with CA,
// requires client certificates; other machines verify the hub with CA and
// present Cert and Key when they have them.
type HubTLS struct {
	Cert string `yaml:"cert,omitempty"`
	Key  string `yaml:"key,omitempty"`
	CA   string `yaml:"ca,omitempty"`
}

var machineName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`) })

// Defaults of the hub.
const (
	DefaultHubListen = "127.0.0.1:4222"
	DefaultHubStore  = layout.HubStore
)

func defaultHub() Hub {
	return Hub{Listen: DefaultHubListen, Store: DefaultHubStore, Replicas: 1}
}

// Remote reports whether agent takes its turns on a machine other than the
// hub's, through `agentctl run --hub`.
func (c Config) Remote(a Agent) bool {
	return a.Machine != "" && a.Machine != c.Hub.Machine
}

// RemoteAgents lists the agents that take their turns on other machines.
func (c Config) RemoteAgents() []string {
	var names []string
	for _, a := range c.Agents {
		if c.Remote(a) {
			names = append(names, a.Name)
		}
	}
	return names
}

// Seats maps each machine other than the hub's to the agents seated on
// it: the machines the embedded hub makes an identity for.
func (c Config) Seats() map[string][]string {
	seats := map[string][]string{}
	for _, a := range c.Agents {
		if c.Remote(a) {
			seats[a.Machine] = append(seats[a.Machine], a.Name)
		}
	}
	return seats
}

// SeatedOn lists the agents of machine.
func (c Config) SeatedOn(machine string) []string {
	var names []string
	for _, a := range c.Agents {
		if a.Machine == machine {
			names = append(names, a.Name)
		}
	}
	return names
}

// File resolves a path of the hub's settings against the runtime root.
func (h Hub) File(root, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(root, p)
}

// URLs splits a comma-separated list of server URLs.
func URLs(list string) []string {
	var out []string
	for _, u := range strings.Split(list, ",") {
		if u = strings.TrimSpace(u); u != "" {
			out = append(out, u)
		}
	}
	return out
}

func (h Hub) validate(agents []Agent) error {
	if h.Replicas < 1 || h.Replicas > 5 {
		return fmt.Errorf("hub.replicas: %d is not between 1 and 5", h.Replicas)
	}
	if h.Listen != "" {
		if _, _, err := hostport.Split(h.Listen); err != nil {
			return fmt.Errorf("hub.listen: %q is not host:port (e.g. 127.0.0.1:4222): %v", h.Listen, err)
		}
	}
	if h.Cluster.Listen != "" {
		if _, _, err := hostport.Split(h.Cluster.Listen); err != nil {
			return fmt.Errorf("hub.cluster.listen: %q is not host:port (e.g. 0.0.0.0:6222): %v", h.Cluster.Listen, err)
		}
	}
	for _, list := range []struct{ name, v string }{{"hub.url", h.URL}, {"hub.nats", h.NATS}} {
		for _, u := range URLs(list.v) {
			if err := checkNATSURL(u); err != nil {
				return fmt.Errorf("%s: %w", list.name, err)
			}
		}
	}
	if (h.TLS.Cert == "") != (h.TLS.Key == "") {
		return fmt.Errorf("hub.tls: cert and key go together")
	}
	if (h.User == "") != (h.PasswordFile == "") {
		return fmt.Errorf("hub: user and password_file go together")
	}
	if h.Machine != "" && !machineName().MatchString(h.Machine) {
		return fmt.Errorf("hub.machine: %q is not a machine name: use letters, digits, '.', '-' and '_'", h.Machine)
	}
	for i, a := range agents {
		if a.Machine != "" && !machineName().MatchString(a.Machine) {
			return fmt.Errorf("agents[%d] (%s): machine %q is not a machine name: use letters, digits, '.', '-' and '_'", i, a.Name, a.Machine)
		}
		if a.Machine != "" && h.Machine == "" {
			return fmt.Errorf("agents[%d] (%s): machine %q is set but hub.machine is not: name the machine that keeps the runtime folder", i, a.Name, a.Machine)
		}
	}
	return nil
}

// checkNATSURL accepts what NATS clients dial: nats://, tls://, or a bare
// host:port.
func checkNATSURL(s string) error {
	if !strings.Contains(s, "://") {
		if _, _, err := hostport.Split(s); err != nil {
			return fmt.Errorf("%q is neither a nats:// URL nor host:port", s)
		}
		return nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("%q is not a URL: %v", s, err)
	}
	switch u.Scheme {
	case "nats", "tls", "ws", "wss":
	default:
		return fmt.Errorf("%q: scheme %q is not nats, tls, ws or wss", s, u.Scheme)
	}
	if u.Host == "" {
		return fmt.Errorf("%q names no host", s)
	}
	return nil
}
