// Package loopback checks that a DevTools endpoint is on this machine: a
// DevTools port lets whoever reaches it type into the app and run code in
// it, so the settings that name one and the driver that dials one refuse
// any other, by the same rule.
package loopback

import (
	"fmt"
	"net/url"
)

// CheckEndpoint accepts http://HOST:PORT where HOST is a loopback address.
func CheckEndpoint(endpoint string) error {
	u, err := url.Parse(endpoint)
	if err != nil || u.Scheme != "http" || u.Port() == "" || (u.Path != "" && u.Path != "/") {
		return fmt.Errorf("%q is not http://127.0.0.1:PORT", endpoint)
	}
	switch u.Hostname() {
	case "127.0.0.1", "localhost", "::1":
		return nil
	}
	return fmt.Errorf("%q is not on loopback (127.0.0.1, ::1 or localhost): a DevTools port must never be reachable from elsewhere", endpoint)
}
