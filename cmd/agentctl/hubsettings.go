package main

import (
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/rs/zerolog"

	"github.com/agentctl/agentctl/agents/hub"
	"github.com/agentctl/agentctl/config"
)

// hubClient hands package hub the connection settings of agentctl.yaml's
// hub section: TLS files, and the swarm's credentials read from their
// files. A secret file others can read is refused, as ssh refuses a key.
func hubClient(env *Env, cfg config.Config, urls []string, name string, log zerolog.Logger) (hub.ClientSettings, error) {
	h := cfg.Hub
	c := hub.ClientSettings{URLs: urls, Name: name, Log: log,
		TLS: hub.TLS{Cert: h.File(env.Root, h.TLS.Cert), Key: h.File(env.Root, h.TLS.Key), CA: h.File(env.Root, h.TLS.CA)}}
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
	return c, nil
}

// hubServer hands package hub the embedded server's settings; listen,
// when not empty, overrides hub.listen.
func hubServer(env *Env, cfg config.Config, listen, name string, log zerolog.Logger) (hub.ServerSettings, error) {
	h := cfg.Hub
	s := hub.ServerSettings{Name: name, Listen: listen, StoreDir: h.File(env.Root, h.Store), Log: log,
		TLS:     hub.TLS{Cert: h.File(env.Root, h.TLS.Cert), Key: h.File(env.Root, h.TLS.Key), CA: h.File(env.Root, h.TLS.CA)},
		Cluster: hub.Cluster{Name: h.Cluster.Name, Listen: h.Cluster.Listen, Routes: h.Cluster.Routes}}
	if s.Listen == "" {
		s.Listen = h.Listen
	}
	if h.User != "" {
		pw, err := readSecret(h.File(env.Root, h.PasswordFile), "hub.password_file")
		if err != nil {
			return s, err
		}
		s.Users = []hub.User{{Name: h.User, Password: pw}}
		s.Cluster.User, s.Cluster.Password = h.User, pw
	}
	if h.NKey != "" {
		s.NKeys = append(s.NKeys, h.NKey)
	}
	if h.NKeySeedFile != "" {
		pub, err := hub.PublicKey(h.File(env.Root, h.NKeySeedFile))
		if err != nil {
			return s, err
		}
		s.NKeys = append(s.NKeys, pub)
	}
	return s, nil
}

// readSecret reads a one-line secret from a file only its owner can read.
func readSecret(path, setting string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", setting, err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		return "", withHint(fmt.Errorf("%s: %s can be read by other users (mode %v)", setting, path, fi.Mode().Perm()),
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
