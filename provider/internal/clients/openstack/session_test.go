package openstack

import (
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
)

// hangingKeystone issues tokens at once and holds every other request
// until release is closed (or the client gives up).
func hangingKeystone(t *testing.T, release <-chan struct{}) *httptest.Server {
	t.Helper()
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/v3/auth/tokens" {
			w.Header().Set("X-Subject-Token", "token")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusCreated)
			fmt.Fprintf(w, `{"token": {"expires_at": %q, "catalog": [{"type": "identity", "endpoints": [{"interface": "public", "region": "RegionOne", "region_id": "RegionOne", "url": %q}]}]}}`,
				time.Now().Add(time.Hour).UTC().Format(time.RFC3339), srv.URL+"/v3/")
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
		if r.Method == http.MethodPost && r.URL.Path == "/v3/auth/tokens" {
			w.Header().Set("X-Subject-Token", "token")
			w.WriteHeader(http.StatusCreated)
			fmt.Fprintf(w, `{"token": {"expires_at": %q, "catalog": [{"type": "identity", "endpoints": [{"interface": "public", "region": "RegionOne", "region_id": "RegionOne", "url": %q}]}]}}`,
				time.Now().Add(time.Hour).UTC().Format(time.RFC3339), srv.URL+"/v3/")
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
