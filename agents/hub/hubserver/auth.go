package hubserver

import (
	"errors"
	"fmt"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"
	"golang.org/x/crypto/bcrypt"

	"github.com/agentctl/agentctl/agents/hub/hubconf"
)

// setAuth makes the server accept exactly these users and keys. With any
// set, a client that presents none is refused.
func setAuth(opts *server.Options, users []hubconf.User, keys []hubconf.Key) error {
	for _, u := range users {
		if u.Name == "" || u.Password == "" {
			return errors.New("every hub user needs a name and a password")
		}
		// The server keeps and compares a bcrypt hash, never the password.
		hash, err := bcrypt.GenerateFromPassword([]byte(u.Password), bcrypt.DefaultCost)
		if err != nil {
			return fmt.Errorf("cannot hash the password of hub user %s: %w", u.Name, err)
		}
		opts.Users = append(opts.Users, &server.User{Username: u.Name, Password: string(hash)})
	}
	for _, k := range keys {
		if !nkeys.IsValidPublicUserKey(k.PublicKey) {
			return fmt.Errorf("%q is not a user's public nkey (one starting with U)", k.PublicKey)
		}
		opts.Nkeys = append(opts.Nkeys, &server.NkeyUser{Nkey: k.PublicKey, Permissions: permissions(k.Permissions)})
	}
	return nil
}

// permissions is p as the server spells it; nil stays nil, every subject.
func permissions(p *hubconf.Permissions) *server.Permissions {
	if p == nil {
		return nil
	}
	return &server.Permissions{
		Publish:   &server.SubjectPermission{Allow: p.Publish},
		Subscribe: &server.SubjectPermission{Allow: p.Subscribe},
	}
}
