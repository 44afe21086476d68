// Package openstack is the provider's door to OpenStack: authenticated
// sessions shared per credential (the token cache), one narrow interface per
// service in front of gophercloud, and the classification of errors into
// terminal and retryable. Controllers never see an HTTP client.
package openstack

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"

	"github.com/c5c3/consumer-plane/provider/internal/clients/cache"
)

// Config is what a ProviderConfig and its Secrets resolve to.
type Config struct {
	// Auth is the Keystone credential; AllowReauth is forced on.
	Auth gophercloud.AuthOptions
	// Region of the endpoints to use from the catalog.
	Region string
	// CABundle is PEM trusted in addition to the system roots; empty uses the
	// system roots.
	CABundle []byte
	// Insecure skips TLS verification (only from a clouds.yaml "verify: false").
	Insecure bool
}

// key identifies a credential: two ProviderConfigs with the same credential
// share one session and its token.
func (c Config) key() string {
	h := sha256.New()
	a := c.Auth
	for _, s := range []string{a.IdentityEndpoint, a.Username, a.UserID, a.Password, a.DomainID, a.DomainName,
		a.TenantID, a.TenantName, a.ApplicationCredentialID, a.ApplicationCredentialName, a.ApplicationCredentialSecret,
		fmt.Sprint(a.Scope), c.Region, string(c.CABundle), fmt.Sprint(c.Insecure)} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// A Session is an authenticated gophercloud provider client and the service
// clients of one region. It is safe for concurrent use: gophercloud
// serialises re-authentication, so one token serves every reconcile until
// Keystone rejects it (expiry or revocation), when exactly one new token is
// requested.
type Session struct {
	provider *gophercloud.ProviderClient
	region   string

	mu       sync.Mutex
	services map[string]*gophercloud.ServiceClient
}

// Service returns the client of one catalog service ("identity", "compute",
// "block-storage", "network") in the session's region. An endpoint missing
// from the catalog is a terminal error that names the region.
func (s *Session) Service(kind string) (*gophercloud.ServiceClient, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sc, ok := s.services[kind]; ok {
		return sc, nil
	}
	eo := gophercloud.EndpointOpts{Region: s.region}
	var (
		sc  *gophercloud.ServiceClient
		err error
	)
	switch kind {
	case ServiceIdentity:
		sc, err = openstack.NewIdentityV3(s.provider, eo)
	case ServiceCompute:
		sc, err = openstack.NewComputeV2(s.provider, eo)
		if sc != nil {
			// 2.41 returns aggregate UUIDs; quotas and aggregates behave the
			// same from there to the newest Nova.
			sc.Microversion = "2.41"
		}
	case ServiceBlockStorage:
		sc, err = openstack.NewBlockStorageV3(s.provider, eo)
	case ServiceNetwork:
		sc, err = openstack.NewNetworkV2(s.provider, eo)
	default:
		return nil, fmt.Errorf("unknown OpenStack service %q", kind)
	}
	if err != nil {
		return nil, Terminal(fmt.Errorf("no %s endpoint in region %q of the Keystone catalog (check spec.region of the ProviderConfig): %w", kind, s.region, err))
	}
	s.services[kind] = sc
	return sc, nil
}

// Catalog returns the types of the services with a public endpoint in the
// session's region, sorted, from the catalog of the session's token (no
// request: the catalog came with the token, and a re-authentication
// renews it).
func (s *Session) Catalog() ([]string, error) {
	res, ok := s.provider.GetAuthResult().(tokens.CreateResult)
	if !ok {
		return nil, fmt.Errorf("the session's token is not a Keystone v3 token (%T)", s.provider.GetAuthResult())
	}
	sc, err := res.ExtractServiceCatalog()
	if err != nil {
		return nil, fmt.Errorf("cannot read the token's service catalog: %w", err)
	}
	var types []string
	for _, e := range sc.Entries {
		for _, ep := range e.Endpoints {
			if ep.Interface == string(gophercloud.AvailabilityPublic) && (s.region == "" || ep.Region == s.region || ep.RegionID == s.region) {
				types = append(types, e.Type)
				break
			}
		}
	}
	slices.Sort(types)
	return slices.Compact(types), nil
}

// Region is the region the session's service clients use.
func (s *Session) Region() string { return s.region }

// Catalog service kinds.
const (
	ServiceIdentity     = "identity"
	ServiceCompute      = "compute"
	ServiceBlockStorage = "block-storage"
	ServiceNetwork      = "network"
)

// A Cache holds one authenticated Session per credential, so steady-state
// polls of every managed resource reuse a token instead of requesting one
// per reconcile. The least recently used sessions beyond the size are
// dropped (credentials rotate; old ones must not pile up), as are sessions
// unused for longer than the idle time.
type Cache struct {
	sessions *cache.Cache[*Session]
	// transport is the base of every session's HTTP client (tests and the
	// benchmark count requests through it).
	transport http.RoundTripper
	// calls bounds the requests one session has under way (0: no bound),
	// wait how long a request waits for one of them to end.
	calls int
	wait  time.Duration
	// systemRoots stands in for the system's roots in tests (nil: the
	// system's).
	systemRoots *x509.CertPool
}

// DefaultSessions is how many credentials' sessions the provider keeps by
// default. Every cloud has two credentials: its ProviderConfig's admin, and
// its tenant's user, as whom the ApplicationCredential logs in. A session
// per credential and region costs a token and its catalog (a few KiB), so
// a landscape of 5,000 clouds (10,000 sessions) fits; past the size, every
// poll of the evicted ones authenticates again (2,048 before: past 1,024
// clouds).
const DefaultSessions = 16384

// Defaults of LimitCalls: one cloud's resources rarely need more requests
// under way at once, and a healthy endpoint answers well within the wait.
const (
	DefaultCallsPerSession = 8
	DefaultCallWait        = 3 * time.Second
)

// NewCache returns a session cache of at most size credentials.
func NewCache(size int, idle time.Duration) *Cache {
	return &Cache{sessions: cache.New[*Session](size, idle, nil), transport: pooled(DefaultCallsPerSession)}
}

// pooled is Go's default transport keeping as many idle connections to a
// host as a session may have requests under way. The default keeps two: a
// cloud's resources reconciled together (8 requests at once) closed the
// rest after each burst and opened them again, a TLS handshake each, which
// a busy Keystone or Nova answered after 10 s or not at all ("TLS
// handshake timeout", seen while the demo's clouds converged). Connections
// idle for 90 s are closed as before.
func pooled(calls int) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone() //nolint:forcetypeassert // net/http's own
	t.MaxIdleConnsPerHost = max(calls, 2)
	return t
}

// LimitCalls bounds each session to calls requests under way at once; a
// request (or an authentication another reconcile has under way) that
// waits longer than wait fails with a retryable error. A cloud whose
// endpoint accepts connections and never answers then holds at most calls
// reconcile workers, for the client's timeout each, instead of every
// worker that the other clouds' resources share.
func (c *Cache) LimitCalls(calls int, wait time.Duration) *Cache {
	c.calls, c.wait = calls, wait
	c.sessions.WithBuildWait(wait)
	if _, ours := c.transport.(*http.Transport); ours {
		c.transport = pooled(calls)
	}
	return c
}

// Session returns the cached session of cfg's credential, authenticating
// once when there is none.
func (c *Cache) Session(ctx context.Context, cfg Config) (*Session, error) {
	s, err := c.sessions.Get(cfg.key(), func() (*Session, error) { return c.authenticate(ctx, cfg) })
	var busy *cache.BusyError
	if errors.As(err, &busy) {
		return nil, fmt.Errorf("keystone at %s: %w", cfg.Auth.IdentityEndpoint, err)
	}
	return s, err
}

func (c *Cache) authenticate(ctx context.Context, cfg Config) (*Session, error) {
	pc, err := openstack.NewClient(cfg.Auth.IdentityEndpoint)
	if err != nil {
		return nil, Terminal(fmt.Errorf("invalid Keystone URL %q: %w", cfg.Auth.IdentityEndpoint, err))
	}
	rt, err := c.transportFor(cfg)
	if err != nil {
		return nil, err
	}
	if c.calls > 0 {
		rt = &limitingTransport{next: rt, slots: make(chan struct{}, c.calls), wait: c.wait}
	}
	pc.HTTPClient = http.Client{Transport: rt, Timeout: callTimeout}
	pc.UserAgent.Prepend("cobaltcore-provider")
	pc.MaxBackoffRetries = maxRetries
	pc.RetryBackoffFunc = retryBackoff
	pc.RetryFunc = retryIdempotent

	auth := cfg.Auth
	auth.AllowReauth = true
	if err := openstack.Authenticate(ctx, pc, auth); err != nil {
		return nil, classifyAuth(cfg.Auth, err)
	}
	return &Session{provider: pc, region: cfg.Region, services: map[string]*gophercloud.ServiceClient{}}, nil
}

// callTimeout bounds one request, reading its answer included.
const callTimeout = 60 * time.Second

// limitingTransport lets a session have at most cap(slots) requests under
// way.
type limitingTransport struct {
	next  http.RoundTripper
	slots chan struct{}
	wait  time.Duration
}

func (t *limitingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	timer := time.NewTimer(t.wait)
	defer timer.Stop()
	select {
	case t.slots <- struct{}{}:
	case <-timer.C:
		return nil, &BusyError{Host: r.URL.Host, Calls: cap(t.slots), Waited: t.wait}
	case <-r.Context().Done():
		return nil, r.Context().Err()
	}
	// The slot is held until the answer's headers arrive: an endpoint that
	// hangs does so before it answers, and a slot must never depend on a
	// caller closing a body.
	defer func() { <-t.slots }()
	return t.next.RoundTrip(r)
}

func (c *Cache) transportFor(cfg Config) (http.RoundTripper, error) {
	if len(cfg.CABundle) == 0 && !cfg.Insecure {
		return countingTransport{next: c.transport}, nil
	}
	base, ok := c.transport.(*http.Transport)
	if !ok {
		// A test transport: it decides about TLS itself.
		return countingTransport{next: c.transport}, nil
	}
	if cfg.Insecure {
		t := base.Clone()
		t.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: true} //nolint:gosec // Only when the clouds.yaml says verify: false.
		return countingTransport{next: t}, nil
	}
	bundle := x509.NewCertPool()
	if !bundle.AppendCertsFromPEM(cfg.CABundle) {
		return nil, Terminal(fmt.Errorf("the CA bundle holds no PEM certificate"))
	}
	return countingTransport{next: &bundleTransport{base: base, bundle: bundle, system: c.systemRoots, hosts: map[string]*http.Transport{}}}, nil
}

// bundleTransport is the HTTP client of a cloud with its own CA bundle: it
// trusts a server whose chain ends in the bundle or, failing that, in the
// system's roots. x509.SystemCertPool hands every caller its own copy of
// the system's roots, about 45 KB, and a pool per cloud with the bundle
// added to it cost 225 MB at 5,000 clouds (docs/benchmarks.md); the bundle
// alone is a few KB, and the system's roots are then shared.
//
// Go's TLS client tells a VerifyConnection callback no host name when it
// dials an IP address (it sends no SNI), so each host gets its own
// http.Transport whose callback knows the name it must verify.
type bundleTransport struct {
	base   *http.Transport
	bundle *x509.CertPool
	system *x509.CertPool // nil: the system's roots

	mu    sync.Mutex
	hosts map[string]*http.Transport
}

func (t *bundleTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	host := r.URL.Hostname()
	t.mu.Lock()
	ht, ok := t.hosts[host]
	if !ok {
		ht = t.base.Clone()
		// ServerName is sent as SNI; the check itself is verifyChain's.
		ht.TLSClientConfig = &tls.Config{
			MinVersion:         tls.VersionTLS12,
			ServerName:         host,
			InsecureSkipVerify: true, //nolint:gosec // VerifyConnection verifies the chain and the host name.
			VerifyConnection:   verifyChain(host, t.bundle, t.system),
		}
		t.hosts[host] = ht
	}
	t.mu.Unlock()
	return ht.RoundTrip(r)
}

// verifyChain is crypto/tls's own verification of a server's certificate
// for host (the same options its client uses), against bundle first and
// the system's roots (system, or the process's when nil) second.
func verifyChain(host string, bundle, system *x509.CertPool) func(tls.ConnectionState) error {
	return func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return fmt.Errorf("tls: %s sent no certificate", host)
		}
		opts := x509.VerifyOptions{DNSName: host, Roots: bundle, Intermediates: x509.NewCertPool()}
		for _, c := range cs.PeerCertificates[1:] {
			opts.Intermediates.AddCert(c)
		}
		_, err := cs.PeerCertificates[0].Verify(opts)
		if err == nil {
			return nil
		}
		opts.Roots = system
		if _, sysErr := cs.PeerCertificates[0].Verify(opts); sysErr == nil {
			return nil
		}
		// The bundle's answer names what a platform engineer configured.
		return &tls.CertificateVerificationError{UnverifiedCertificates: cs.PeerCertificates, Err: err}
	}
}
