package hub

import (
	"fmt"
	"os"
	"strings"

	"github.com/nats-io/nkeys"
)

// PublicKey is the public key of the nkey seed in file, which the hub
// accepts so that one seed file serves every machine of the swarm.
func PublicKey(file string) (string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("cannot read the nkey seed: %w", err)
	}
	kp, err := nkeys.FromSeed([]byte(strings.TrimSpace(string(data))))
	if err != nil {
		return "", fmt.Errorf("%s holds no nkey seed: %w", file, err)
	}
	defer kp.Wipe()
	pub, err := kp.PublicKey()
	if err != nil {
		return "", fmt.Errorf("%s holds no nkey seed: %w", file, err)
	}
	return pub, nil
}
