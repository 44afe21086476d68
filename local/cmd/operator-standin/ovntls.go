package main

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ovnv1alpha1 "github.com/c5c3/consumer-plane/apis/ovn/v1alpha1"
)

// With ssl: endpoints, the c5c3-operator gives each cloud a client
// certificate of its OVN databases' CA, in Secret ovn-client-tls of the
// cloud's namespace (the contract the OpenStackCluster function reads). The
// stand-in mints them from the local OVN's CA (-ovn-ca-cert, -ovn-ca-key),
// and one for its own ovn-sbctl.
const ovnClientTLSSecret = "ovn-client-tls"

type localCA struct {
	cert    *x509.Certificate
	certPEM []byte
	key     crypto.Signer
}

// loadCA reads the CA's PEM certificate and key (PKCS#8, PKCS#1 or EC,
// as openssl writes them).
func loadCA(certFile, keyFile string) (*localCA, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return nil, err
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, err
	}
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, fmt.Errorf("%s and %s must hold a PEM certificate and key", certFile, keyFile)
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", certFile, err)
	}
	var key any
	if key, err = x509.ParsePKCS8PrivateKey(kb.Bytes); err != nil {
		if key, err = x509.ParsePKCS1PrivateKey(kb.Bytes); err != nil {
			key, err = x509.ParseECPrivateKey(kb.Bytes)
		}
	}
	signer, ok := key.(crypto.Signer)
	if err != nil || !ok {
		return nil, fmt.Errorf("%s: not a private key openssl writes: %v", keyFile, err)
	}
	return &localCA{cert: cert, certPEM: certPEM, key: signer}, nil
}

// issue mints a client certificate for cn: its PEM certificate and key.
func (ca *localCA) issue(cn string) (certPEM, keyPEM []byte, err error) {
	der, key, err := ca.sign(&x509.Certificate{Subject: pkix.Name{CommonName: cn}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	if err != nil {
		return nil, nil, err
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8}), nil
}

// sign mints a certificate of tmpl's subject and uses, valid for a year,
// with a new key: its DER and the key.
func (ca *localCA) sign(tmpl *x509.Certificate) ([]byte, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, nil, err
	}
	tmpl.SerialNumber = serial
	tmpl.NotBefore = time.Now().Add(-time.Minute)
	tmpl.NotAfter = time.Now().Add(365 * 24 * time.Hour)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, nil, err
	}
	return der, key, nil
}

// ovnClientTLS is the cloud's client certificate Secret, nil when its OVN
// endpoints are not ssl:.
func (s *standin) ovnClientTLS(namespace string) (*corev1.Secret, error) {
	if !s.ovnSSL() {
		return nil, nil
	}
	cert, key, err := s.ovnCA.issue("cloud-" + namespace)
	if err != nil {
		return nil, err
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: ovnClientTLSSecret, Namespace: namespace},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{ovnv1alpha1.TLSSecretKeyCA: s.ovnCA.certPEM, ovnv1alpha1.TLSSecretKeyCert: cert, ovnv1alpha1.TLSSecretKeyKey: key},
	}, nil
}

// ovnSSL says whether the published endpoints are ssl:.
func (s *standin) ovnSSL() bool {
	return strings.Contains(s.ovnNB+" "+s.ovnSB, "ssl:")
}

// setUpOVNTLS loads the CA when the endpoints are ssl: and writes the
// stand-in's own client certificate for ovn-sbctl into dir; it returns
// ovn-sbctl's TLS flags.
func setUpOVNTLS(c config, dir string) (*localCA, []string, error) {
	if !strings.Contains(c.ovnNB+" "+c.ovnSB, "ssl:") {
		return nil, nil, nil
	}
	if c.ovnCACert == "" || c.ovnCAKey == "" {
		return nil, nil, errors.New("ssl: OVN endpoints need -ovn-ca-cert and -ovn-ca-key (the CA that signs the clouds' client certificates)")
	}
	ca, err := loadCA(c.ovnCACert, c.ovnCAKey)
	if err != nil {
		return nil, nil, err
	}
	cert, key, err := ca.issue("operator-standin")
	if err != nil {
		return nil, nil, err
	}
	files := map[string][]byte{"ca.crt": ca.certPEM, "tls.crt": cert, "tls.key": key}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return nil, nil, err
		}
	}
	return ca, []string{"--private-key=" + filepath.Join(dir, "tls.key"), "--certificate=" + filepath.Join(dir, "tls.crt"), "--ca-cert=" + filepath.Join(dir, "ca.crt")}, nil
}
