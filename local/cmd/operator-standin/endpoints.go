package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/config/clouds"
)

// The c5c3-operator publishes a cloud's Keystone at the public endpoint its
// ControlPlane names (spec.services.keystone.publicEndpoint,
// https://keystone.<cloud>.<endpoint domain>), behind a certificate of the
// CA its admin credential names. The cloud's ProviderConfig logs in there
// and nowhere else (the OpenStackCluster function pins it), and the
// tenant's clouds.yaml names it. The stand-in serves those endpoints
// (-public-endpoints): TLS for any keystone.* name under -public-domain,
// with a certificate for that name minted from the local OpenStack's CA,
// in front of the local Keystone. The DNS stand-in resolves the names to
// this address, as a landscape's wildcard record resolves them to its
// ingress.
//
// What it does not simulate: a name per ControlPlane (any keystone.* name
// under the domain is served), the other services' public endpoints (the
// catalog names the local services' own).

// publicEndpoints serves the clouds' Keystone endpoints.
type publicEndpoints struct {
	ca     *localCA
	domain string // lower case, no trailing dot
	proxy  *httputil.ReverseProxy

	mu    sync.Mutex
	certs map[string]*tls.Certificate
}

// newPublicEndpoints forwards to the Keystone of cloudsYAML (the local
// OpenStack's clouds.yaml, cloud admin, read as registerRegion reads it),
// trusting caBundle.
func newPublicEndpoints(ca *localCA, domain string, cloudsYAML, caBundle []byte) (*publicEndpoints, error) {
	auth, _, _, err := clouds.Parse(clouds.WithCloudsYAML(bytes.NewReader(cloudsYAML)), clouds.WithCloudName("admin"))
	if err != nil {
		return nil, fmt.Errorf("cloud admin of the clouds.yaml: %w", err)
	}
	u, err := url.Parse(auth.IdentityEndpoint)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("the clouds.yaml's cloud admin has no auth_url: %q", auth.IdentityEndpoint)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caBundle) {
		return nil, errors.New("the local OpenStack's CA is not PEM")
	}
	keystone := &url.URL{Scheme: u.Scheme, Host: u.Host}
	p := &publicEndpoints{ca: ca, domain: strings.TrimSuffix(strings.ToLower(domain), "."), certs: map[string]*tls.Certificate{}}
	p.proxy = &httputil.ReverseProxy{
		// The Host header stays the public name, as behind an ingress.
		Rewrite:   func(r *httputil.ProxyRequest) { r.SetURL(keystone); r.Out.Host = r.In.Host },
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}},
	}
	return p, nil
}

// serves says whether name is a Keystone endpoint under the domain.
func (p *publicEndpoints) serves(name string) bool {
	name = strings.ToLower(name)
	return strings.HasPrefix(name, "keystone.") && strings.HasSuffix(name, "."+p.domain)
}

// certificate is the certificate for the name the client asks for (SNI).
func (p *publicEndpoints) certificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	name := strings.ToLower(hello.ServerName)
	if !p.serves(name) {
		return nil, fmt.Errorf("no public endpoint %q here (keystone.<cloud>.%s)", hello.ServerName, p.domain)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.certs[name]; ok {
		return c, nil
	}
	der, key, err := p.ca.sign(&x509.Certificate{DNSNames: []string{name}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	if err != nil {
		return nil, err
	}
	c := &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	p.certs[name] = c
	return c, nil
}

// serve answers on addr until ctx ends.
func (p *publicEndpoints) serve(ctx context.Context, addr string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("cannot serve the public endpoints on %s: %w", addr, err)
	}
	return p.serveOn(ctx, l)
}

// serveOn answers on l until ctx ends.
func (p *publicEndpoints) serveOn(ctx context.Context, l net.Listener) error {
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !p.serves(strings.Split(r.Host, ":")[0]) {
				http.Error(w, "no such endpoint", http.StatusNotFound)
				return
			}
			p.proxy.ServeHTTP(w, r)
		}),
		TLSConfig:         &tls.Config{GetCertificate: p.certificate, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: 10 * time.Second,
	}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	fmt.Printf("serving the clouds' Keystone endpoints keystone.*.%s on %s\n", p.domain, l.Addr())
	if err := srv.ServeTLS(l, "", ""); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
