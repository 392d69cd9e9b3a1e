// Package hubconf is what 'agentctl hub' hands the program that runs the
// hub's NATS server (agentctl-hub, package hubserver): the server's
// settings as plain data, already read from agentctl.yaml and the secret
// files, and their one-line JSON form on that program's standard input,
// never its command line, where every user of the machine could read
// them.
//
// It holds no logic of the hub's: which subjects a key may use is package
// hub's (Identity.Permissions), how the server applies them package
// hubserver's. It imports the standard library only, so that both
// programs may share it and neither carries the other's code.
package hubconf

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
)

// Settings configure the hub's NATS server.
type Settings struct {
	Name     string // server name, unique in a cluster (default: hostname)
	Listen   string // host:port for clients; default "127.0.0.1:4222"; port 0 picks a free one
	StoreDir string // JetStream storage folder (created 0700)
	TLS      TLS
	Users    []User // accepted user/password pairs, with every permission
	Keys     []Key  // accepted user nkeys, each with its permissions
	Cluster  Cluster
}

// TLS names PEM files: Cert and Key serve TLS and CA, when set, requires
// and verifies client certificates (and protects the cluster's routes
// both ways).
type TLS struct{ Cert, Key, CA string }

// Enabled reports whether any TLS file is named.
func (t TLS) Enabled() bool { return t.Cert != "" || t.Key != "" || t.CA != "" }

// Mutual reports whether a server with these files verifies its peers.
func (t TLS) Mutual() bool { return t.Cert != "" && t.CA != "" }

// User is a user/password pair the server accepts, with every permission.
type User struct{ Name, Password string }

// Key is a user's public nkey ("U...") the server accepts.
type Key struct {
	PublicKey string
	// Permissions are the subjects the key may use; nil is every one.
	Permissions *Permissions
}

// Permissions are the subjects a client may publish and subscribe to.
type Permissions struct{ Publish, Subscribe []string }

// Cluster joins the server to other nodes over routes.
type Cluster struct {
	Name   string   // cluster name; all nodes the same
	Listen string   // host:port for routes; "" = no cluster
	Routes []string // nats-route://host:port of the other nodes
	// User and Password protect the routes; required when Listen is not
	// loopback, unless the server's TLS has a CA to verify the nodes.
	User, Password string
}

// Write writes s as the one line Read reads.
func Write(w io.Writer, s Settings) error {
	data, err := json.Marshal(s)
	if err != nil {
		return err
	}
	if _, err := w.Write(append(data, '\n')); err != nil {
		return fmt.Errorf("cannot hand the hub's server its settings: %w", err)
	}
	return nil
}

// Read reads the settings Write wrote, and nothing after them: the rest
// of r is the writer's to keep open.
func Read(r *bufio.Reader) (Settings, error) {
	var s Settings
	line, err := r.ReadBytes('\n')
	if err != nil {
		return s, fmt.Errorf("cannot read the hub's server settings: %w", err)
	}
	if err := json.Unmarshal(line, &s); err != nil {
		return s, fmt.Errorf("cannot read the hub's server settings: %w", err)
	}
	return s, nil
}
