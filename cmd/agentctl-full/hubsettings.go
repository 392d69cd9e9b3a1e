package main

import (
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/rs/zerolog"

	"github.com/agentctl/agentctl/agents/hub"
	"github.com/agentctl/agentctl/agents/hub/hubconf"
	"github.com/agentctl/agentctl/cmd/internal/cli"
	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/internal/layout"
)

// hubRole says whose credentials a connection to the hub presents.
type hubRole struct {
	machine string // the seat machine it serves; "" for the hub itself
	creds   string // --creds: a seed file chosen on the command line
}

// hubClient hands package hub the connection settings of agentctl.yaml's
// hub section: TLS files, and the credentials read from their files. The
// first that is set wins: --creds, hub.credentials, the swarm-wide
// hub.user, hub.nkey_seed_file or hub.creds_file, and last the default
// identity under the runtime (the hub's own, or the machine's copied from
// the hub). A secret file others can read is refused, as ssh refuses a
// key; no credentials at all is refused too, with the way to get them.
func hubClient(env *cli.Env, cfg config.Config, urls []string, name string, log zerolog.Logger, role hubRole) (hub.ClientSettings, error) {
	h := cfg.Hub
	c := hub.ClientSettings{URLs: urls, Name: name, Log: log,
		TLS: hub.TLS{Cert: h.File(env.Root, h.TLS.Cert), Key: h.File(env.Root, h.TLS.Key), CA: h.File(env.Root, h.TLS.CA)}}
	seed, setting := role.creds, "--creds"
	if seed == "" && role.machine != "" && h.Credentials != "" {
		seed, setting = h.File(env.Root, h.Credentials), "hub.credentials"
	}
	if seed != "" {
		if _, err := readSecret(seed, setting); err != nil {
			return c, err
		}
		c.Credentials.NKeySeedFile = seed
		return c, nil
	}
	if h.User != "" {
		pw, err := readSecret(h.File(env.Root, h.PasswordFile), "hub.password_file")
		if err != nil {
			return c, err
		}
		c.Credentials.User, c.Credentials.Password = h.User, pw
	}
	if h.NKeySeedFile != "" {
		if _, err := readSecret(h.File(env.Root, h.NKeySeedFile), "hub.nkey_seed_file"); err != nil {
			return c, err
		}
		c.Credentials.NKeySeedFile = h.File(env.Root, h.NKeySeedFile)
	}
	if h.CredsFile != "" {
		if _, err := readSecret(h.File(env.Root, h.CredsFile), "hub.creds_file"); err != nil {
			return c, err
		}
		c.Credentials.CredsFile = h.File(env.Root, h.CredsFile)
	}
	if c.Credentials != (hub.Credentials{}) {
		return c, nil
	}
	def := layout.HubOwnSeed(env.Root)
	if role.machine != "" {
		def = layout.HubMachineSeed(env.Root, role.machine)
	}
	if _, err := os.Stat(def); err == nil {
		if _, err := readSecret(def, "the hub's credentials"); err != nil {
			return c, err
		}
		c.Credentials.NKeySeedFile = def
		return c, nil
	}
	where := strings.Join(urls, ", ")
	if role.machine == "" {
		return c, cli.WithHint(fmt.Errorf("no credentials for the NATS server at %s: without them anyone who reaches it reads every prompt", where),
			"configure the server with users, and set hub.user and hub.password_file (or hub.nkey_seed_file, or hub.creds_file)")
	}
	return c, cli.WithHint(fmt.Errorf("no credentials for the hub at %s: the hub refuses connections without them", where),
		fmt.Sprintf("on the hub's machine run 'agentctl hub credentials %s --out %s.nk', copy the file here to %s (chmod 600), or pass --creds FILE",
			role.machine, role.machine, def))
}

// hubServer makes the settings agentctl-hub serves with; listen, when not
// empty, overrides hub.listen. A --server-only node (nodeOnly) accepts the
// swarm-wide login only: it serves hubs of other runtimes, which hold none
// of its identities.
func hubServer(env *cli.Env, cfg config.Config, listen, name string, nodeOnly bool) (hubconf.Settings, error) {
	h := cfg.Hub
	s := hubconf.Settings{Name: name, Listen: listen, StoreDir: h.File(env.Root, h.Store),
		TLS:     hubconf.TLS{Cert: h.File(env.Root, h.TLS.Cert), Key: h.File(env.Root, h.TLS.Key), CA: h.File(env.Root, h.TLS.CA)},
		Cluster: hubconf.Cluster{Name: h.Cluster.Name, Listen: h.Cluster.Listen, Routes: h.Cluster.Routes}}
	if s.Listen == "" {
		s.Listen = h.Listen
	}
	if h.User != "" {
		pw, err := readSecret(h.File(env.Root, h.PasswordFile), "hub.password_file")
		if err != nil {
			return s, err
		}
		s.Users = []hubconf.User{{Name: h.User, Password: pw}}
		s.Cluster.User, s.Cluster.Password = h.User, pw
	}
	var nkeys []string
	if h.NKey != "" {
		nkeys = append(nkeys, h.NKey)
	}
	if h.NKeySeedFile != "" {
		pub, err := hub.PublicKey(h.File(env.Root, h.NKeySeedFile))
		if err != nil {
			return s, err
		}
		nkeys = append(nkeys, pub)
	}
	if nodeOnly {
		s.Keys = hub.ServerKeys(nkeys, nil)
		return s, nil
	}
	// The default credentials: the hub's own identity and one per seat
	// machine, made on first start.
	ids, err := hub.Identities(env.Root, cfg.Seats())
	if err != nil {
		return s, fmt.Errorf("cannot make the hub's credentials: %w", err)
	}
	s.Keys = hub.ServerKeys(nkeys, ids)
	return s, nil
}

// readSecret reads a one-line secret from a file only its owner can read.
func readSecret(path, setting string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", setting, err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		return "", cli.WithHint(fmt.Errorf("%s: %s can be read by other users (mode %v)", setting, path, fi.Mode().Perm()),
			"chmod 600 "+path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", setting, err)
	}
	secret := strings.TrimSpace(string(data))
	if secret == "" {
		return "", fmt.Errorf("%s: %s is empty", setting, path)
	}
	return secret, nil
}

// thisMachine is the name of the machine this process runs on, as
// agentctl.yaml names machines: the flag, else the setting, else the host.
func thisMachine(flagValue, setting string) string {
	if flagValue != "" {
		return flagValue
	}
	if setting != "" {
		return setting
	}
	host, _ := os.Hostname()
	return host
}
