package hostport

import (
	"net"
	"testing"
)

// Split answers as net.SplitHostPort does, errors included.
func TestSplitAgreesWithPackageNet(t *testing.T) {
	for _, s := range []string{
		"127.0.0.1:4222", ":4222", "host:", "[::1]:4222", "[fe80::1%eth0]:80", "0.0.0.0:6222",
		"4222", "host", "::1", "a:b:4222", "[::1]", "[::1]x", "[::1]:4222:1", "[::1", "a]:1", "[a]b]:1", "a[b:1", "",
	} {
		host, port, err := Split(s)
		wantHost, wantPort, wantErr := net.SplitHostPort(s)
		if host != wantHost || port != wantPort || (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
			t.Errorf("Split(%q) = %q, %q, %v; net says %q, %q, %v", s, host, port, err, wantHost, wantPort, wantErr)
		}
	}
}
