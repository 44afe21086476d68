package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testCA is a CA of the test's own, loaded as the stand-in loads the local
// OpenStack's.
func testCA(t *testing.T) *localCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"}, NotBefore: time.Now().Add(-time.Minute),
		NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "ca.crt"), filepath.Join(dir, "ca.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8}), 0o600); err != nil {
		t.Fatal(err)
	}
	ca, err := loadCA(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

// TestPublicEndpoints: a cloud's Keystone endpoint under the domain is
// served with a certificate for its name, of the CA, and reaches the
// Keystone of the clouds.yaml with the public name as Host; another
// service's name, or a name outside the domain, gets no certificate.
func TestPublicEndpoints(t *testing.T) {
	ca := testCA(t)
	der, key, err := ca.sign(&x509.Certificate{IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	if err != nil {
		t.Fatal(err)
	}
	keystone := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, r.Host+" "+r.URL.Path)
	}))
	keystone.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}, MinVersion: tls.VersionTLS12}
	keystone.StartTLS()
	defer keystone.Close()
	clouds := []byte("clouds:\n  admin:\n    auth:\n      auth_url: " + keystone.URL + "/v3\n")
	p, err := newPublicEndpoints(ca, "cobaltcore.example", clouds, ca.certPEM)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = p.serveOn(ctx, l) }()

	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca.certPEM)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
		// Every name resolves to the stand-in, as the DNS stand-in answers.
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, l.Addr().String())
		},
	}}
	rsp, err := client.Get("https://keystone.team-a-prod-7xk2p.cloud.cobaltcore.example/v3")
	if err != nil {
		t.Fatalf("the cloud's Keystone endpoint: %v", err)
	}
	b, _ := io.ReadAll(rsp.Body)
	_ = rsp.Body.Close()
	if want := "keystone.team-a-prod-7xk2p.cloud.cobaltcore.example /v3"; rsp.StatusCode != http.StatusOK || string(b) != want {
		t.Errorf("the cloud's Keystone endpoint answered %d %q, want 200 %q", rsp.StatusCode, b, want)
	}
	for _, u := range []string{"https://nova.team-a-prod-7xk2p.cloud.cobaltcore.example/", "https://keystone.team-a-prod-7xk2p.elsewhere.example/v3"} {
		if rsp, err := client.Get(u); err == nil || !strings.Contains(err.Error(), "tls") {
			if err == nil {
				_ = rsp.Body.Close()
			}
			t.Errorf("%s: %v, want a TLS failure", u, err)
		}
	}
}
