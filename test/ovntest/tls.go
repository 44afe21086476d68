package ovntest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// PEM is a certificate and key, with the CA that signed it.
type PEM struct{ CA, Cert, Key []byte }

// StartTLS runs OVN like Start (single Northbound) with the Northbound
// also listening on ssl: (client certificates required, as OVN deploys
// it). SSLNB is that endpoint; Client is a certificate it accepts.
func StartTLS(t testing.TB) (o *OVN, sslNB string, client PEM) {
	t.Helper()
	Available(t)
	dir := t.TempDir()
	ca, caKey := newCert(t, "ovn-test-ca", nil, nil)
	server, serverKey := newCert(t, "ovsdb-server", ca, caKey)
	cert, key := newCert(t, "provider", ca, caKey)
	files := map[string][]byte{"ca.pem": certPEM(ca), "server.pem": certPEM(server), "server-key.pem": keyPEM(t, serverKey)}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	port := freePort()
	o = &OVN{dir: t.TempDir(), extraNB: []string{fmt.Sprintf("--remote=pssl:%d:127.0.0.1", port),
		"--private-key=" + filepath.Join(dir, "server-key.pem"), "--certificate=" + filepath.Join(dir, "server.pem"),
		"--ca-cert=" + filepath.Join(dir, "ca.pem")}}
	t.Cleanup(o.Stop)
	if err := o.start(false); err != nil {
		t.Fatalf("cannot start OVN with TLS: %v (logs in %s)", err, o.dir)
	}
	return o, fmt.Sprintf("ssl:127.0.0.1:%d", port), PEM{CA: certPEM(ca), Cert: certPEM(cert), Key: keyPEM(t, key)}
}

// NewCA returns a CA no server trusts, for refusal tests.
func NewCA(t testing.TB) []byte {
	t.Helper()
	ca, _ := newCert(t, "someone-else", nil, nil)
	return certPEM(ca)
}

func newCert(t testing.TB, cn string, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
	}
	signer, signerKey := tmpl, key
	if parent == nil {
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
		tmpl.KeyUsage |= x509.KeyUsageCertSign
	} else {
		signer, signerKey = parent, parentKey
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &key.PublicKey, signerKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key
}

func certPEM(c *x509.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
}

func keyPEM(t testing.TB, k *ecdsa.PrivateKey) []byte {
	t.Helper()
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})
}
