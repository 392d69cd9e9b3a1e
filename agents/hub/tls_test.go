package hub

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/agentctl/agentctl/agents/hub/hubconf"
)

// testPKI is a throwaway CA with a server and a client certificate, as
// PEM files in a temporary folder.
type testPKI struct {
	CA, ServerCert, ServerKey, ClientCert, ClientKey string
}

func newTestPKI(t *testing.T, name string) testPKI {
	t.Helper()
	dir := t.TempDir()
	caKey := newKey(t)
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name + " test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	p := testPKI{CA: writePEM(t, dir, "ca.pem", "CERTIFICATE", caDER)}
	p.ServerCert, p.ServerKey = issue(t, dir, "server", ca, caKey, x509.ExtKeyUsageServerAuth)
	p.ClientCert, p.ClientKey = issue(t, dir, "client", ca, caKey, x509.ExtKeyUsageClientAuth)
	return p
}

func newKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// issue signs a certificate for localhost and 127.0.0.1, both for serving
// and for routes, which present the server certificate as clients too.
func issue(t *testing.T, dir, name string, ca *x509.Certificate, caKey *ecdsa.PrivateKey, usage x509.ExtKeyUsage) (cert, key string) {
	t.Helper()
	k := newKey(t)
	usages := []x509.ExtKeyUsage{usage}
	if usage == x509.ExtKeyUsageServerAuth {
		usages = append(usages, x509.ExtKeyUsageClientAuth)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  usages,
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return writePEM(t, dir, name+".pem", "CERTIFICATE", der), writePEM(t, dir, name+"-key.pem", "PRIVATE KEY", keyDER)
}

func writePEM(t *testing.T, dir, name, kind string, der []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestTLSClientVerifiesServer(t *testing.T) {
	pki := newTestPKI(t, "hub")
	srv := startTestServer(t, hubconf.Settings{TLS: hubconf.TLS{Cert: pki.ServerCert, Key: pki.ServerKey}})
	if !strings.HasPrefix(srv.ClientURL(), "tls://") {
		t.Errorf("ClientURL() = %q, want a tls:// URL", srv.ClientURL())
	}

	nc := connectTest(t, ClientSettings{URLs: []string{srv.ClientURL()}, TLS: TLS{CA: pki.CA}})
	if !nc.TLSRequired() {
		t.Error("connection is not TLS")
	}

	// Without the CA the system roots cannot vouch for the hub: refused at
	// once, not retried until the context ends.
	err := refused(t, ClientSettings{URLs: []string{srv.ClientURL()}})
	if !strings.Contains(err.Error(), "certificate") {
		t.Errorf("Connect without the CA: err = %v, want it to speak of certificates", err)
	}
	// A CA that did not sign the hub's certificate is no better.
	other := newTestPKI(t, "other")
	refused(t, ClientSettings{URLs: []string{srv.ClientURL()}, TLS: TLS{CA: other.CA}})
}

func TestMutualTLS(t *testing.T) {
	pki := newTestPKI(t, "hub")
	srv := startTestServer(t, hubconf.Settings{TLS: hubconf.TLS{Cert: pki.ServerCert, Key: pki.ServerKey, CA: pki.CA}})

	connectTest(t, ClientSettings{
		URLs: []string{srv.ClientURL()},
		TLS:  TLS{CA: pki.CA, Cert: pki.ClientCert, Key: pki.ClientKey},
	})

	refused(t, ClientSettings{URLs: []string{srv.ClientURL()}, TLS: TLS{CA: pki.CA}})
	other := newTestPKI(t, "other")
	refused(t, ClientSettings{
		URLs: []string{srv.ClientURL()},
		TLS:  TLS{CA: pki.CA, Cert: other.ClientCert, Key: other.ClientKey},
	})
}

func TestServerTLSNeedsCertAndKey(t *testing.T) {
	pki := newTestPKI(t, "hub")
	_, err := startServer(hubconf.Settings{Listen: "127.0.0.1:0", StoreDir: t.TempDir(), TLS: hubconf.TLS{CA: pki.CA}})
	if err == nil || !strings.Contains(err.Error(), "certificate and a key") {
		t.Errorf("StartServer with only a CA: err = %v, want one asking for a certificate and a key", err)
	}
}

// A hub refusing a client certificate shows in one of two ways, depending
// on whether the client read the alert before the hub hung up.
func TestRefusedClientCertificateIsPermanent(t *testing.T) {
	for _, err := range []error{
		&net.OpError{Op: "remote error", Err: errors.New("tls: certificate required")},
		fmt.Errorf("%w: connection closed by remote after TLS handshake: %w", nats.ErrTLS, syscall.EPIPE),
		fmt.Errorf("%w: connection closed by remote after TLS handshake: %w", nats.ErrTLS, io.EOF),
	} {
		if !isCertificateError(err) {
			t.Errorf("isCertificateError(%v) = false, want true", err)
		}
	}
	for _, err := range []error{
		fmt.Errorf("%w: %w", nats.ErrTLS, os.ErrDeadlineExceeded),
		&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED},
		nats.ErrNoServers,
	} {
		if isCertificateError(err) {
			t.Errorf("isCertificateError(%v) = true, want false: retrying may help", err)
		}
	}
}
