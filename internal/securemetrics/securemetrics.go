// Package securemetrics serves a controller's Prometheus metrics the way a
// cluster's own components do: over HTTPS, to callers the API server
// authenticates (TokenReview of their bearer token) and authorizes
// (SubjectAccessReview: get on the non-resource URL /metrics). The provider
// and the node agents share it; without it, whoever reaches the port reads
// the metrics, which name every cloud, pool and credential error.
package securemetrics

import (
	"flag"

	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// Flags are the metrics server's command-line settings.
type Flags struct {
	// Address is where metrics are served; "0" turns them off.
	Address string
	// Insecure serves plain HTTP to anyone (for a process whose port only
	// a trusted scraper can reach, or a local test).
	Insecure bool
	// CertDir holds tls.crt and tls.key; empty: a self-signed certificate
	// made in memory at start (a scraper then skips verification, as it
	// does for kube-controller-manager's).
	CertDir string
}

// Bind registers the flags on fs, the address defaulting to addr.
func (f *Flags) Bind(fs *flag.FlagSet, addr string) {
	fs.StringVar(&f.Address, "metrics-bind-address", addr, "Where to serve Prometheus metrics; 0 turns them off.")
	fs.BoolVar(&f.Insecure, "metrics-insecure", false, "Serve metrics over plain HTTP to anyone who reaches the port, instead of HTTPS to callers allowed to get /metrics (TokenReview and SubjectAccessReview).")
	fs.StringVar(&f.CertDir, "metrics-cert-dir", "", "Directory of the metrics server's tls.crt and tls.key; empty: a self-signed certificate made at start.")
}

// Options are controller-runtime's metrics server options for f.
func (f Flags) Options() metricsserver.Options {
	if f.Insecure {
		return metricsserver.Options{BindAddress: f.Address}
	}
	return metricsserver.Options{
		BindAddress:    f.Address,
		SecureServing:  true,
		CertDir:        f.CertDir,
		FilterProvider: filters.WithAuthenticationAndAuthorization,
	}
}
