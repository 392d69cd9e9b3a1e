package hub

// identity.go owns the hub's default credentials: an nkey per
// seat machine and one for the hub's own runners and commands, made on
// first start, and what each may publish and subscribe to. The hub's
// identity may use every subject; a machine's only those of the agents
// seated on it, so a machine, or an account that stole its seed, can
// neither read the prompts of other machines' agents nor send as them.

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"

	"github.com/nats-io/nkeys"

	"github.com/agentctl/agentctl/agents/hub/hubconf"
	"github.com/agentctl/agentctl/internal/atomicfile"
	"github.com/agentctl/agentctl/internal/layout"
)

// Identity is a key the hub's server accepts.
type Identity struct {
	// Machine is the seat machine the key is for; "" for the hub's own.
	Machine   string
	PublicKey string
	// Agents are the agents seated on Machine: the subjects it may use.
	Agents []string
}

// Identities makes, the first time, and reads the hub's default
// identities under root: the hub's own first, then one per machine of
// seats (machine → the agents seated on it). Seeds are kept in
// layout.HubCredentials, a folder only this user may enter, each file
// readable by this user only, whatever the umask; a seed made once is kept,
// so the copies on the other machines stay valid.
func Identities(root string, seats map[string][]string) ([]Identity, error) {
	if err := privateDir(root); err != nil {
		return nil, err
	}
	own, err := ensureSeed(layout.HubOwnSeed(root))
	if err != nil {
		return nil, err
	}
	ids := []Identity{{PublicKey: own}}
	machines := make([]string, 0, len(seats))
	for m := range seats {
		machines = append(machines, m)
	}
	sort.Strings(machines)
	for _, m := range machines {
		pub, err := ensureSeed(layout.HubMachineSeed(root, m))
		if err != nil {
			return nil, err
		}
		ids = append(ids, Identity{Machine: m, PublicKey: pub, Agents: slices.Sorted(slices.Values(seats[m]))})
	}
	return ids, nil
}

// privateDir creates the credentials folder 0700, and makes it so if it
// is not: the umask, or an older copy, must not open it.
func privateDir(root string) error {
	dir := layout.HubCredentials(root)
	if err := atomicfile.MkdirAll(filepath.Dir(dir)); err != nil {
		return fmt.Errorf("cannot create the hub's folder: %w", err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("cannot create the hub's credentials folder: %w", err)
	}
	if runtime.GOOS == "windows" {
		return nil
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("cannot make the hub's credentials folder private: %w", err)
	}
	return nil
}

// ensureSeed returns the public key of the user seed at path, making the
// seed first if there is none. Two processes making it at once end with
// one seed: the file appears whole, by a link that fails if it exists.
func ensureSeed(path string) (string, error) {
	if pub, err := PublicKey(path); err == nil {
		return pub, checkPrivate(path)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	kp, err := nkeys.CreateUser()
	if err != nil {
		return "", fmt.Errorf("cannot make an nkey: %w", err)
	}
	defer kp.Wipe()
	seed, err := kp.Seed()
	if err != nil {
		return "", fmt.Errorf("cannot make an nkey: %w", err)
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	tmp := filepath.Join(filepath.Dir(path), atomicfile.TempPrefix+filepath.Base(path)+"."+hex.EncodeToString(b[:]))
	if err := atomicfile.WriteSecret(tmp, append(seed, '\n')); err != nil {
		return "", err
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, path); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("cannot keep the nkey seed %s: %w", path, err)
	}
	if err := atomicfile.SyncDir(filepath.Dir(path)); err != nil {
		return "", err
	}
	return PublicKey(path)
}

// checkPrivate refuses a seed others may read: it is a password.
func checkPrivate(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("the nkey seed %s can be read by other users (mode %v); chmod 600 it", path, fi.Mode().Perm())
	}
	return nil
}

// InboxPrefix is where the replies to a client signing with the key pub
// come: a machine may subscribe under its own prefix only, so that it
// cannot read the answers JetStream gives to other machines.
func InboxPrefix(pub string) string { return "_INBOX." + pub }

// Permissions is what an identity may publish and subscribe to: nil, all
// of it, for the hub's own; for a machine's, the subjects of its agents'
// seats, forwarders and JetStream consumers, and nothing else.
func (id Identity) Permissions() *hubconf.Permissions {
	if id.Machine == "" {
		return nil
	}
	pub := []string{}
	for _, s := range []string{TurnsStream, RepliesStream, DeliverStream} {
		pub = append(pub, "$JS.API.STREAM.INFO."+s)
	}
	sub := []string{InboxPrefix(id.PublicKey) + ".>"}
	for _, a := range id.Agents {
		seat := "seat-" + a
		pub = append(pub,
			replySubject(a), answerSubject(a), stageSubject(a), beatSubject(a),
			// As its agent only: the hub checks that the message says so too.
			"agentctl.deliver.*."+a,
			"$JS.API.CONSUMER.INFO."+TurnsStream+"."+seat,
			"$JS.API.CONSUMER.INFO."+RepliesStream+".hub-"+a,
			// Only with the filter in the subject, which the server holds
			// the consumer to: a seat of its own cannot read other turns.
			"$JS.API.CONSUMER.CREATE."+TurnsStream+"."+seat+"."+turnSubject(a),
			"$JS.API.CONSUMER.MSG.NEXT."+TurnsStream+"."+seat,
			"$JS.ACK."+TurnsStream+"."+seat+".>",
		)
		sub = append(sub, cancelSubject(a))
	}
	return &hubconf.Permissions{Publish: pub, Subscribe: sub}
}

// ServerKeys are the nkeys the hub's server accepts: nkeys with every
// permission, then each identity not among them with its own.
func ServerKeys(nkeys []string, ids []Identity) []hubconf.Key {
	keys := make([]hubconf.Key, 0, len(nkeys)+len(ids))
	for _, k := range nkeys {
		keys = append(keys, hubconf.Key{PublicKey: k})
	}
	for _, id := range ids {
		if slices.Contains(nkeys, id.PublicKey) {
			continue // accepted above with every permission
		}
		keys = append(keys, hubconf.Key{PublicKey: id.PublicKey, Permissions: id.Permissions()})
	}
	return keys
}
