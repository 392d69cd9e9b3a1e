package hub

import (
	"errors"
	"fmt"
	"slices"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"
	"golang.org/x/crypto/bcrypt"
)

// setAuth makes the server accept exactly these users, nkeys and
// identities. With any set, a client that presents none is refused.
func setAuth(opts *server.Options, users []User, publicKeys []string, ids []Identity) error {
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
	for _, k := range publicKeys {
		if !nkeys.IsValidPublicUserKey(k) {
			return fmt.Errorf("%q is not a user's public nkey (one starting with U)", k)
		}
		opts.Nkeys = append(opts.Nkeys, &server.NkeyUser{Nkey: k})
	}
	for _, id := range ids {
		if !nkeys.IsValidPublicUserKey(id.PublicKey) {
			return fmt.Errorf("%q is not a user's public nkey (one starting with U)", id.PublicKey)
		}
		if slices.Contains(publicKeys, id.PublicKey) {
			continue // accepted above with every permission
		}
		opts.Nkeys = append(opts.Nkeys, &server.NkeyUser{Nkey: id.PublicKey, Permissions: id.permissions()})
	}
	return nil
}
