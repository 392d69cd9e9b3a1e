package hub

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"strings"

	"github.com/nats-io/nats.go"
)

// TLS names PEM files. On a client, CA verifies the server (the system
// roots when empty) and Cert and Key present a client certificate. On the
// hub's server (ServerSettings), Cert and Key serve TLS and CA, when set,
// requires and verifies client certificates.
type TLS struct{ Cert, Key, CA string }

// Enabled reports whether any TLS file is named.
func (t TLS) Enabled() bool { return t.Cert != "" || t.Key != "" || t.CA != "" }

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
