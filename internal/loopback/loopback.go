// Package loopback checks that an address is on this machine. A DevTools
// port lets whoever reaches it type into the app and run code in it, so
// the settings that name one and the driver that dials one refuse any
// other, by the same rule (CheckEndpoint). The hub may listen without
// credentials only on loopback, and the command that checks its settings
// and the server that refuses them judge by the same rule (IsAddress).
//
// It owns that rule only: it never resolves a host name (only localhost
// and loopback addresses pass) and never opens a connection.
package loopback

import (
	"fmt"
	"net/netip"
	"net/url"
	"strings"

	"github.com/agentctl/agentctl/internal/hostport"
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

// IsAddress reports whether listen ("host:port" or a bare host) names a
// loopback address. An empty host means every interface.
func IsAddress(listen string) bool {
	host, _, err := SplitHostPort(listen)
	if err != nil || host == "" {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Zone() == "" && ip.IsLoopback()
}

// SplitHostPort accepts "host:port", ":port", "[::1]:port" and a bare
// host or IP; port is "" when absent.
func SplitHostPort(listen string) (host, port string, err error) {
	if ip, err := netip.ParseAddr(strings.Trim(listen, "[]")); err == nil && ip.Zone() == "" {
		return ip.Unmap().String(), "", nil
	}
	if !strings.Contains(listen, ":") {
		return listen, "", nil
	}
	return hostport.Split(listen)
}
