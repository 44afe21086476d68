package openstack

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"

	"github.com/c5c3/consumer-plane/local/garden"
)

// hangingKeystone issues tokens at once and holds every other request
// until release is closed (or the client gives up).
func hangingKeystone(t *testing.T, release <-chan struct{}) *httptest.Server {
	t.Helper()
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if issuedToken(w, r, srv.URL) {
			return
		}
		select {
		case <-release:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"project": {"id": "p"}}`)
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// issuedToken answers a login (and reports that it did) with a token whose
// catalog holds one identity endpoint at base.
func issuedToken(w http.ResponseWriter, r *http.Request, base string) bool {
	if r.Method != http.MethodPost || r.URL.Path != "/v3/auth/tokens" {
		return false
	}
	w.Header().Set("X-Subject-Token", "token")
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	fmt.Fprintf(w, `{"token": {"expires_at": %q, "catalog": [{"type": "identity", "endpoints": [{"interface": "public", "region": "RegionOne", "region_id": "RegionOne", "url": %q}]}]}}`,
		time.Now().Add(time.Hour).UTC().Format(time.RFC3339), base+"/v3/")
	return true
}

// loggedIn logs into the stand-in Keystone at url (trusting ca, when
// given) through c and returns the session and its identity client.
func loggedIn(t *testing.T, c *Cache, url string, ca []byte) (*Session, *gophercloud.ServiceClient) {
	t.Helper()
	s, err := c.Session(context.Background(), Config{Region: "RegionOne", CABundle: ca, Auth: gophercloud.AuthOptions{
		IdentityEndpoint: url + "/v3", Username: "u", Password: "p", DomainName: "Default"}})
	if err != nil {
		t.Fatal(err)
	}
	id, err := s.Service(ServiceIdentity)
	if err != nil {
		t.Fatal(err)
	}
	return s, id
}

// TestCallsPerSessionAreBounded: with as many requests under way as the
// session may have, the next one fails fast with a BusyError (the worker
// is free again) instead of waiting for an endpoint that does not answer;
// once those answer, requests go through again.
func TestCallsPerSessionAreBounded(t *testing.T) {
	release := make(chan struct{})
	srv := hangingKeystone(t, release)
	c := NewCache(4, time.Hour).LimitCalls(2, 50*time.Millisecond)
	s, id := loggedIn(t, c, srv.URL, nil)
	get := func() error {
		var body map[string]any
		_, err := id.Get(context.Background(), id.ServiceURL("projects", "p"), &body, nil)
		return err
	}
	hung := make(chan error, 2)
	for range 2 {
		go func() { hung <- get() }()
	}
	lt, ok := s.provider.HTTPClient.Transport.(*limitingTransport)
	if !ok {
		t.Fatalf("the session's transport is %T, want the limiting one", s.provider.HTTPClient.Transport)
	}
	for deadline := time.Now().Add(5 * time.Second); len(lt.slots) < 2; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the two requests never got under way")
		}
	}
	var busy *BusyError
	if err := get(); !errors.As(err, &busy) {
		t.Fatalf("a third request while two hang = %v, want a BusyError", err)
	}
	if busy.Calls != 2 || busy.Host == "" {
		t.Errorf("BusyError = %+v, want 2 calls and the host", busy)
	}
	close(release)
	for range 2 {
		if err := <-hung; err != nil {
			t.Fatalf("a request under way: %v", err)
		}
	}
	if err := get(); err != nil {
		t.Fatalf("after the endpoint answered: %v", err)
	}
}

// TestSessionKeepsItsConnections: a session's requests under way at once
// (as many as LimitCalls allows) reuse their connections in the next burst
// instead of each opening a new one, a TLS handshake each. With Go's
// default of two idle connections per host, ten bursts of eight opened
// about sixty.
func TestSessionKeepsItsConnections(t *testing.T) {
	const calls, bursts = 8, 10
	var mu sync.Mutex
	opened := 0
	var srv *httptest.Server
	srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if issuedToken(w, r, srv.URL) {
			return
		}
		time.Sleep(20 * time.Millisecond) // long enough for a burst's requests to overlap
		fmt.Fprint(w, `{"project": {"id": "p"}}`)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			mu.Lock()
			opened++
			mu.Unlock()
		}
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})

	_, id := loggedIn(t, NewCache(4, time.Hour).LimitCalls(calls, 5*time.Second), srv.URL, ca)
	for range bursts {
		var wg sync.WaitGroup
		errs := make(chan error, calls)
		for range calls {
			wg.Go(func() {
				var body map[string]any
				_, err := id.Get(context.Background(), id.ServiceURL("projects", "p"), &body, nil)
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if opened > calls+1 {
		t.Errorf("%d bursts of %d requests opened %d connections, want at most %d (one per request under way, and the login's)", bursts, calls, opened, calls+1)
	}
}

// serveKeystone starts a stand-in Keystone over TLS whose certificate ca
// signs for hosts (names or IP addresses).
func serveKeystone(t testing.TB, ca *garden.CA, hosts ...string) *httptest.Server {
	t.Helper()
	pair, err := ca.Server("keystone", hosts...)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(pair.Cert, pair.Key)
	if err != nil {
		t.Fatal(err)
	}
	var srv *httptest.Server
	srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if issuedToken(w, r, "https://"+r.Host) {
			return
		}
		fmt.Fprint(w, `{"project": {"id": "p"}}`)
	}))
	srv.TLS = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes are the point
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// TestCABundleIsTrustedBesideTheSystemRoots: a cloud's CA bundle is
// trusted in addition to the system's roots, never instead of checking the
// server's name, also when the endpoint is an IP address (Go's TLS client
// sends no server name for one).
func TestCABundleIsTrustedBesideTheSystemRoots(t *testing.T) {
	a, b := newCA(t, "cloud A"), newCA(t, "cloud B")
	systemB := x509.NewCertPool()
	systemB.AddCert(b.Cert)

	cases := map[string]struct {
		signer  *garden.CA
		hosts   []string // what the server's certificate names
		host    string   // what the URL names instead of 127.0.0.1, if anything
		bundle  []byte
		system  *x509.CertPool
		refused bool
	}{
		"the bundle's CA":                             {signer: a, hosts: []string{"127.0.0.1"}, bundle: a.CertPEM()},
		"the bundle's CA, for a DNS name":             {signer: a, hosts: []string{"localhost"}, host: "localhost", bundle: a.CertPEM()},
		"another CA":                                  {signer: b, hosts: []string{"127.0.0.1"}, bundle: a.CertPEM(), refused: true},
		"the system's roots beside the bundle":        {signer: b, hosts: []string{"127.0.0.1"}, bundle: a.CertPEM(), system: systemB},
		"an IP address the certificate does not name": {signer: a, hosts: []string{"keystone.example"}, bundle: a.CertPEM(), refused: true},
		"a name the certificate does not hold":        {signer: a, hosts: []string{"127.0.0.1"}, host: "localhost", bundle: a.CertPEM(), refused: true},
		"a name only the system's CA may sign":        {signer: b, hosts: []string{"keystone.example"}, bundle: a.CertPEM(), system: systemB, refused: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			srv := serveKeystone(t, tc.signer, tc.hosts...)
			url := srv.URL
			if tc.host != "" {
				url = strings.Replace(url, "127.0.0.1", tc.host, 1)
			}
			c := NewCache(4, time.Hour)
			c.systemRoots = tc.system
			s, err := c.Session(context.Background(), Config{Region: "RegionOne", CABundle: tc.bundle, Auth: gophercloud.AuthOptions{
				IdentityEndpoint: url + "/v3", Username: "u", Password: "p", DomainName: "Default"}})
			var verr *tls.CertificateVerificationError
			switch {
			case tc.refused && err == nil:
				t.Fatal("the login went through, want the server's certificate refused")
			case tc.refused && !errors.As(err, &verr):
				t.Fatalf("login = %v, want a certificate verification error", err)
			case tc.refused:
				return
			case err != nil:
				t.Fatalf("login = %v, want it to go through", err)
			}
			id, err := s.Service(ServiceIdentity)
			if err != nil {
				t.Fatal(err)
			}
			var body map[string]any
			if _, err := id.Get(context.Background(), id.ServiceURL("projects", "p"), &body, nil); err != nil {
				t.Fatalf("a request after the login: %v", err)
			}
		})
	}
}

func newCA(t testing.TB, name string) *garden.CA {
	t.Helper()
	ca, err := garden.NewCA(name)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

// TestInvalidCABundleIsTerminal: a bundle without a certificate is the
// ProviderConfig's error, said once, not retried.
func TestInvalidCABundleIsTerminal(t *testing.T) {
	_, err := NewCache(4, time.Hour).Session(context.Background(), Config{Region: "RegionOne", CABundle: []byte("not PEM"), Auth: gophercloud.AuthOptions{
		IdentityEndpoint: "https://127.0.0.1:1/v3", Username: "u", Password: "p", DomainName: "Default"}})
	if err == nil || !IsTerminal(err) || !strings.Contains(err.Error(), "no PEM certificate") {
		t.Fatalf("login with a bundle of no certificate = %v, want a terminal error that says so", err)
	}
}
