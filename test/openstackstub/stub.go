// Package openstackstub serves many OpenStack clouds at once, for measuring
// the provider at landscape scale (#55): each cloud answers on its own
// loopback address (127.x.y.z, all on one port) with its own CA, tokens and
// objects, as 5,000 clouds that are each their own OpenStack do. It answers
// the Keystone, Nova, Cinder and Neutron calls the provider makes, from
// memory and at once, so that what a measurement sees is the provider.
//
// It is not an OpenStack: it keeps what the provider reads back and no
// more, checks passwords and tokens, and counts what each cloud is asked.
// The provider's integration tests run against the real local OpenStack;
// this stub is for scale only.
package openstackstub

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Region is the region every stub cloud's catalog names.
const Region = "eu-de-1"

// AdminPassword is the password of each cloud's user admin (project admin,
// domain Default).
const AdminPassword = "secret"

// maxClouds: cloud i answers on 127.1.(i/250).(1+i%250).
const maxClouds = 250 * 256

// Backends are the Cinder backends every stub cloud runs (cinder-volume
// services), one per storage pool of the landscape.
var Backends = []string{"ceph-st-pool-a", "ceph-st-pool-b", "ceph-st-pool-s"}

// A Landscape is n clouds, each on its own address.
type Landscape struct {
	Clouds []*Cloud
	port   int
	mu     sync.Mutex
	cancel context.CancelFunc
}

// New starts n clouds on 127.1.0.1 onwards, all on port (0: a free one).
// Each cloud has its own self-signed CA. Close stops them.
func New(n, port int) (*Landscape, error) {
	if n > maxClouds {
		return nil, fmt.Errorf("at most %d clouds (one per address 127.1.x.y)", maxClouds)
	}
	ctx, cancel := context.WithCancel(context.Background())
	l := &Landscape{cancel: cancel, port: port}
	for i := range n {
		c, err := l.add(ctx, i)
		if err != nil {
			l.Close()
			return nil, err
		}
		l.Clouds = append(l.Clouds, c)
	}
	return l, nil
}

// Add starts one more cloud.
func (l *Landscape) Add() (*Cloud, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := len(l.Clouds)
	if i >= maxClouds {
		return nil, fmt.Errorf("at most %d clouds", maxClouds)
	}
	c, err := l.add(context.Background(), i)
	if err != nil {
		return nil, err
	}
	l.Clouds = append(l.Clouds, c)
	return c, nil
}

// Address is the loopback address cloud i answers on.
func Address(i int) net.IP { return net.IPv4(127, 1, byte(i/250), byte(1+i%250)) }

func (l *Landscape) add(ctx context.Context, i int) (*Cloud, error) {
	ip := Address(i)
	ln, err := net.Listen("tcp", net.JoinHostPort(ip.String(), fmt.Sprint(l.port)))
	if err != nil {
		return nil, fmt.Errorf("cloud %d: %w", i, err)
	}
	if l.port == 0 {
		l.port = ln.Addr().(*net.TCPAddr).Port
	}
	caPEM, cert, err := certificate(ip)
	if err != nil {
		_ = ln.Close()
		return nil, err
	}
	c := newCloud(i, "https://"+ln.Addr().String(), caPEM)
	// A client that goes mid-handshake (the provider killed) is no error
	// of the stub's: its log stays quiet.
	srv := &http.Server{Handler: c.routes(), ReadHeaderTimeout: 30 * time.Second, ErrorLog: log.New(io.Discard, "", 0),
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}}
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	go func() { <-ctx.Done(); _ = srv.Close() }()
	c.server = srv
	return c, nil
}

// Close stops every cloud.
func (l *Landscape) Close() {
	l.cancel()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.Clouds {
		if c.server != nil {
			_ = c.server.Close()
		}
	}
}

// certificate makes a CA and a server certificate for ip signed by it.
func certificate(ip net.IP) ([]byte, tls.Certificate, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "stub cloud CA " + ip.String()},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(48 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: ip.String()}, IPAddresses: []net.IP{ip},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(48 * time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

// Counts are what a cloud was asked since it started: authentications,
// reads and writes (every request but an authentication is one or the
// other), requests it does not serve, and observes (reads and writes of one
// of the provider's objects: a reconcile's look at it).
type Counts struct {
	Auths, Reads, Writes, Unknown, Observes int64
}

// counters are a cloud's Counts, updated without its lock.
type counters struct {
	auths, reads, writes, unknown, observes atomic.Int64
	first                                   atomic.Int64 // unix nanoseconds of the first request
}

// ErrNotFound is what Drift returns for an object the cloud does not have.
var ErrNotFound = errors.New("no such object")
