package hub

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// TLS names PEM files. On a server, Cert and Key serve TLS and CA, when
// set, requires and verifies client certificates (and protects the
// cluster's routes both ways). On a client, CA verifies the server (the
// system roots when empty) and Cert and Key present a client certificate.
type TLS struct{ Cert, Key, CA string }

// Enabled reports whether any TLS file is named.
func (t TLS) Enabled() bool { return t.Cert != "" || t.Key != "" || t.CA != "" }

// mutual reports whether a server with these files verifies its peers.
func (t TLS) mutual() bool { return t.Cert != "" && t.CA != "" }

// serverConfig builds the tls.Config of a server's client port.
func (t TLS) serverConfig() (*tls.Config, error) {
	if t.Cert == "" || t.Key == "" {
		return nil, errors.New("a hub serving TLS needs both a certificate and a key file")
	}
	cfg, err := server.GenTLSConfig(&server.TLSConfigOpts{
		CertFile: t.Cert,
		KeyFile:  t.Key,
		CaFile:   t.CA,
		Verify:   t.CA != "",
	})
	if err != nil {
		return nil, fmt.Errorf("cannot load the hub's TLS files: %w", err)
	}
	return cfg, nil
}

// routeConfig builds the tls.Config of a cluster's routes: the same
// certificate, and the CA verifying the other nodes in both directions.
func (t TLS) routeConfig() (*tls.Config, error) {
	cfg, err := server.GenTLSConfig(&server.TLSConfigOpts{
		CertFile: t.Cert,
		KeyFile:  t.Key,
		CaFile:   t.CA,
		Verify:   true,
	})
	if err != nil {
		return nil, fmt.Errorf("cannot load the hub's TLS files for the cluster routes: %w", err)
	}
	return cfg, nil
}

// isCertificateError reports whether err is a failed certificate check,
// on either side: retrying cannot help until someone changes a file.
func isCertificateError(err error) bool {
	var (
		verify    *tls.CertificateVerificationError
		authority x509.UnknownAuthorityError
		hostname  x509.HostnameError
		invalid   x509.CertificateInvalidError
		op        *net.OpError
	)
	if errors.As(err, &op) && op.Op == "remote error" {
		// crypto/tls reports the peer's alert this way, here a hub
		// requiring or rejecting the client's certificate.
		return true
	}
	if errors.Is(err, nats.ErrTLS) && strings.Contains(err.Error(), "closed by remote after TLS handshake") {
		// The same refusal when the hub hung up before its alert was
		// read: under TLS 1.3 the client's handshake ends first.
		return true
	}
	return errors.As(err, &verify) || errors.As(err, &authority) ||
		errors.As(err, &hostname) || errors.As(err, &invalid)
}
