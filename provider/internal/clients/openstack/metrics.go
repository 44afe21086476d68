package openstack

import (
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	apiRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "cobaltcore_provider_openstack_requests_total",
		Help: "OpenStack API requests by host and HTTP status code.",
	}, []string{"host", "method", "code"})
	tokensIssued = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "cobaltcore_provider_openstack_tokens_issued_total",
		Help: "Keystone tokens issued to the provider (new sessions and re-authentications).",
	})

	// Plain counters of the same, for tests and the benchmark.
	requestCount atomic.Int64
	tokenCount   atomic.Int64
)

func init() {
	metrics.Registry.MustRegister(apiRequests, tokensIssued)
}

// Counts are the OpenStack API requests and Keystone tokens this process
// has issued so far.
type Counts struct{ Requests, Tokens int64 }

// ReadCounts returns the process-wide counts.
func ReadCounts() Counts {
	return Counts{Requests: requestCount.Load(), Tokens: tokenCount.Load()}
}

// Sub is c - o.
func (c Counts) Sub(o Counts) Counts {
	return Counts{Requests: c.Requests - o.Requests, Tokens: c.Tokens - o.Tokens}
}

// countingTransport counts every request and every token Keystone issues.
type countingTransport struct{ next http.RoundTripper }

func (t countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rsp, err := t.next.RoundTrip(r)
	code := "error"
	if err == nil {
		code = strconv.Itoa(rsp.StatusCode)
	}
	requestCount.Add(1)
	apiRequests.WithLabelValues(r.URL.Host, r.Method, code).Inc()
	if err == nil && r.Method == http.MethodPost && rsp.StatusCode == http.StatusCreated && strings.HasSuffix(r.URL.Path, "/auth/tokens") {
		tokenCount.Add(1)
		tokensIssued.Inc()
	}
	return rsp, err
}
