package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"strings"

	"github.com/agentctl/agentctl/cmd/internal/cli"
	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/internal/layout"
	"github.com/agentctl/agentctl/internal/loopback"
)

// hubConfigured says whether agentctl.yaml has a hub section worth
// checking: anything set beyond the defaults.
func hubConfigured(h config.Hub) bool {
	return h.Machine != "" || h.URL != "" || h.NATS != "" || h.User != "" || h.NKeySeedFile != "" || h.NKey != "" ||
		h.CredsFile != "" || h.Credentials != "" || h.TLS != (config.HubTLS{}) || h.Cluster.Listen != "" || len(h.Cluster.Routes) > 0 ||
		(h.Listen != "" && h.Listen != config.DefaultHubListen)
}

// hubChecks are the doctor's lines on the hub's settings: the secret
// files, the TLS files, whether the hub would listen off loopback without
// credentials, and which agents take their turns on which machine.
func hubChecks(root string, cfg config.Config, me string) []check {
	h := cfg.Hub
	var checks []check
	head := check{name: "hub settings", note: "this machine: " + me}
	if h.NATS != "" {
		head.note += ", external NATS " + h.NATS
	} else if h.Listen != "" {
		head.note += ", listens on " + h.Listen
	}
	checks = append(checks, head)
	for _, s := range []struct{ setting, path string }{
		{"hub.password_file", h.PasswordFile}, {"hub.nkey_seed_file", h.NKeySeedFile}, {"hub.creds_file", h.CredsFile},
	} {
		if s.path == "" {
			continue
		}
		c := check{name: s.setting + " " + h.File(root, s.path), note: "only its owner can read it"}
		if _, err := readSecret(h.File(root, s.path), s.setting); err != nil {
			c.err, c.hint = err, cli.HintOf(err)
			if c.hint == "" {
				c.hint = "create the file with the secret alone on one line, mode 600"
			}
		}
		checks = append(checks, c)
	}
	if h.TLS != (config.HubTLS{}) {
		checks = append(checks, hubTLSCheck(root, h))
	}
	if h.NATS == "" {
		checks = append(checks, hubListenCheck(h))
	}
	if c, ok := hubCredentialsCheck(root, cfg, me); ok {
		checks = append(checks, c)
	}
	for _, a := range cfg.Agents {
		machine := machineOf(cfg, a)
		if machine == "" || machine == me {
			continue // checked with this machine's agents
		}
		how := "its seat: 'agentctl run " + a.Name + " --hub URL' there"
		if !cfg.Remote(a) {
			how = "the hub's machine"
		}
		checks = append(checks, check{name: fmt.Sprintf("agent %s: on %s", a.Name, machine),
			note: how + "; 'agentctl doctor --machine " + machine + "' there checks it"})
	}
	return checks
}

// machineOf is the machine where a's window or command is: its own, else
// the hub's; "" when agentctl.yaml names no machines.
func machineOf(cfg config.Config, a config.Agent) string {
	if a.Machine != "" {
		return a.Machine
	}
	return cfg.Hub.Machine
}

// hubTLSCheck reads the TLS files as the hub and the seats will: the
// certificate with its key, and the CA's certificates.
func hubTLSCheck(root string, h config.Hub) check {
	c := check{name: "hub.tls", hint: "give hub.tls PEM files this user can read: cert and key of this machine, ca of the swarm"}
	var notes []string
	if h.TLS.Cert != "" {
		if _, err := tls.LoadX509KeyPair(h.File(root, h.TLS.Cert), h.File(root, h.TLS.Key)); err != nil {
			c.err = fmt.Errorf("cert and key: %w", err)
			return c
		}
		notes = append(notes, "cert and key match")
	}
	if h.TLS.CA != "" {
		pem, err := os.ReadFile(h.File(root, h.TLS.CA))
		if err != nil {
			c.err = fmt.Errorf("ca: %w", err)
			return c
		}
		if !x509.NewCertPool().AppendCertsFromPEM(pem) {
			c.err = fmt.Errorf("ca: %s holds no PEM certificate", h.File(root, h.TLS.CA))
			return c
		}
		notes = append(notes, "ca read")
	}
	c.note = strings.Join(notes, ", ")
	return c
}

// hubListenCheck says who can reach the hub, every one of them with
// credentials (the hub makes its own), and warns of traffic sent without
// TLS.
func hubListenCheck(h config.Hub) check {
	c := check{name: "hub.listen " + h.Listen}
	if loopback.IsAddress(h.Listen) {
		c.note = "loopback: only this machine can connect, with the hub's credentials"
		return c
	}
	if h.TLS.Cert == "" {
		c.warn = "off loopback without TLS: prompts and replies (and hub.user's password, if set) cross the network in clear"
		c.hint = "set hub.tls.cert and hub.tls.key (and hub.tls.ca on every machine)"
		return c
	}
	c.note = "off loopback, with credentials and TLS"
	return c
}

// hubCredentialsCheck looks, on a seat machine, for the credentials its
// seats will present, as they will look for them.
func hubCredentialsCheck(root string, cfg config.Config, me string) (check, bool) {
	h := cfg.Hub
	if me == h.Machine || len(cfg.SeatedOn(me)) == 0 || h.User != "" || h.NKeySeedFile != "" || h.CredsFile != "" {
		return check{}, false
	}
	path, setting := layout.HubMachineSeed(root, me), "the hub's credentials"
	if h.Credentials != "" {
		path, setting = h.File(root, h.Credentials), "hub.credentials"
	}
	c := check{name: "hub credentials " + path, note: "only its owner can read it"}
	if _, err := readSecret(path, setting); err != nil {
		c.err, c.hint = err, cli.HintOf(err)
		if c.hint == "" {
			c.hint = fmt.Sprintf("on the hub's machine run 'agentctl hub credentials %s --out %s.nk', and copy the file here to %s (chmod 600)", me, me, path)
		}
	}
	return c, true
}
