package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentctl/agentctl/config"
)

// writeCert writes a self-signed certificate and its key as PEM files
// named NAME-cert.pem and NAME-key.pem in dir.
func writeCert(t *testing.T, dir, name string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature, DNSNames: []string{name}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	for file, block := range map[string]*pem.Block{
		name + "-cert.pem": {Type: "CERTIFICATE", Bytes: der},
		name + "-key.pem":  {Type: "EC PRIVATE KEY", Bytes: kder},
	} {
		if err := os.WriteFile(filepath.Join(dir, file), pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func TestDoctorReadsTheHubsTLSFiles(t *testing.T) {
	root := t.TempDir()
	writeCert(t, root, "desk-1")
	writeCert(t, root, "other")
	if err := os.WriteFile(filepath.Join(root, "junk.pem"), []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		tls  config.HubTLS
		want string // "" for a pass
		note string
	}{
		{"a matching pair and a CA", config.HubTLS{Cert: "desk-1-cert.pem", Key: "desk-1-key.pem", CA: "other-cert.pem"}, "", "cert and key match, ca read"},
		{"a seat's CA alone", config.HubTLS{CA: filepath.Join(root, "desk-1-cert.pem")}, "", "ca read"},
		{"another machine's key", config.HubTLS{Cert: "desk-1-cert.pem", Key: "other-key.pem"}, "cert and key: tls: private key does not match public key", ""},
		{"a CA file without certificates", config.HubTLS{CA: "junk.pem"}, "junk.pem holds no PEM certificate", ""},
		{"a missing CA", config.HubTLS{CA: "ca.pem"}, "ca: open ", ""},
	} {
		got := hubTLSCheck(root, config.Hub{TLS: c.tls})
		switch {
		case c.want == "" && (got.err != nil || got.note != c.note):
			t.Errorf("%s: %v, note %q; want a pass noting %q", c.name, got.err, got.note, c.note)
		case c.want != "" && (got.err == nil || !strings.Contains(got.err.Error(), c.want) || got.hint == ""):
			t.Errorf("%s: %v; want a failure with a hint, saying %q", c.name, got.err, c.want)
		}
	}
}

func TestDoctorTellsLoopbackFromTheNetwork(t *testing.T) {
	for _, c := range []struct {
		hub        config.Hub
		fail, warn bool
	}{
		{config.Hub{Listen: "127.0.0.1:4222"}, false, false},
		{config.Hub{Listen: "localhost:4222"}, false, false},
		{config.Hub{Listen: "[::1]:4222"}, false, false},
		// The hub's own credentials guard every listener; TLS is what is
		// left to warn of.
		{config.Hub{Listen: ":4222"}, false, true},
		{config.Hub{Listen: "192.168.1.10:4222"}, false, true},
		{config.Hub{Listen: "192.168.1.10:4222", TLS: config.HubTLS{Cert: "c", Key: "k"}}, false, false},
		{config.Hub{Listen: "0.0.0.0:4222", NKey: "UABC"}, false, true},
		{config.Hub{Listen: "0.0.0.0:4222", User: "swarm", PasswordFile: "pw", TLS: config.HubTLS{Cert: "c", Key: "k"}}, false, false},
	} {
		got := hubListenCheck(c.hub)
		if (got.err != nil) != c.fail || (got.warn != "") != c.warn {
			t.Errorf("listen %q (%+v): err %v, warn %q", c.hub.Listen, c.hub, got.err, got.warn)
		}
	}
}
