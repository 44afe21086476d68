// Package gardenerstandin is a local stand-in for the part of a Gardener
// garden cluster the provider talks to: it serves the shoots/adminkubeconfig
// subresource in front of a plain kube-apiserver that holds Shoots as custom
// resources (Gardener serves them from its own aggregated API server, which
// does not run here).
//
// What it simulates: an AdminKubeconfigRequest for an existing Shoot answers
// a kubeconfig valid for the requested lifetime (Gardener's default cap of 24
// hours applies), 404 for a Shoot that does not exist. What it does not:
// machines, Shoot reconciliation or short-lived client certificates — the
// kubeconfig it hands out is the one it is given: in the demo, that of the
// Shoot's own local kube-apiserver (Clusters), in tests the backing API
// server's own.
package gardenerstandin

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httputil"
	"regexp"
	"sync/atomic"
	"time"

	authenticationv1alpha1 "github.com/gardener/gardener/pkg/apis/authentication/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

var adminKubeconfigPath = regexp.MustCompile(`^/apis/core\.gardener\.cloud/v1beta1/namespaces/([^/]+)/shoots/([^/]+)/adminkubeconfig$`)

// maxLifetime is Gardener's default cap on admin kubeconfigs.
const maxLifetime = 24 * time.Hour

// A Garden serves shoots/adminkubeconfig and proxies everything else to the
// backing API server.
type Garden struct {
	backend    *rest.Config
	proxy      *httputil.ReverseProxy
	kubeconfig func(namespace, shoot string) []byte
	now        func() time.Time

	// Issued counts the kubeconfigs handed out.
	Issued atomic.Int64
}

// New returns a Garden in front of backend. kubeconfig returns what a
// Shoot's admin kubeconfig request is answered with, nil while the Shoot's
// cluster does not serve (answered 503).
func New(backend *rest.Config, kubeconfig func(namespace, shoot string) []byte) (*Garden, error) {
	rt, err := rest.TransportFor(backend)
	if err != nil {
		return nil, err
	}
	host, _, err := rest.DefaultServerUrlFor(backend)
	if err != nil {
		return nil, err
	}
	p := httputil.NewSingleHostReverseProxy(host)
	p.Transport = rt
	return &Garden{backend: backend, proxy: p, kubeconfig: kubeconfig, now: time.Now}, nil
}

func (g *Garden) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m := adminKubeconfigPath.FindStringSubmatch(r.URL.Path)
	if m == nil || r.Method != http.MethodPost {
		g.proxy.ServeHTTP(w, r)
		return
	}
	ns, shoot := m[1], m[2]
	// The Shoot must exist: ask the backend as the proxy would.
	probe, err := http.NewRequestWithContext(r.Context(), http.MethodGet, fmt.Sprintf("/apis/core.gardener.cloud/v1beta1/namespaces/%s/shoots/%s", ns, shoot), nil)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	rec := &statusRecorder{header: http.Header{}}
	g.proxy.ServeHTTP(rec, probe)
	if rec.code != http.StatusOK {
		writeStatus(w, rec.code, fmt.Sprintf("shoots.core.gardener.cloud %q not found", shoot))
		return
	}

	req := &authenticationv1alpha1.AdminKubeconfigRequest{}
	if err := json.NewDecoder(r.Body).Decode(req); err != nil {
		writeStatus(w, http.StatusBadRequest, "cannot decode AdminKubeconfigRequest: "+err.Error())
		return
	}
	lifetime := time.Hour
	if s := req.Spec.ExpirationSeconds; s != nil {
		lifetime = time.Duration(*s) * time.Second
	}
	if lifetime < 10*time.Minute {
		writeStatus(w, http.StatusUnprocessableEntity, "spec.expirationSeconds: must be at least 600")
		return
	}
	lifetime = min(lifetime, maxLifetime)
	kc := g.kubeconfig(ns, shoot)
	if kc == nil {
		writeStatus(w, http.StatusServiceUnavailable, fmt.Sprintf("the cluster of Shoot %s/%s does not serve yet", ns, shoot))
		return
	}
	req.APIVersion, req.Kind = authenticationv1alpha1.SchemeGroupVersion.String(), "AdminKubeconfigRequest"
	req.Status = authenticationv1alpha1.AdminKubeconfigRequestStatus{
		Kubeconfig:          kc,
		ExpirationTimestamp: metav1.NewTime(g.now().Add(lifetime).Truncate(time.Second)),
	}
	g.Issued.Add(1)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(req) //nolint:errcheck // the client sees a truncated body.
}

func writeStatus(w http.ResponseWriter, code int, msg string) {
	reason := metav1.StatusReasonNotFound
	switch code {
	case http.StatusBadRequest:
		reason = metav1.StatusReasonBadRequest
	case http.StatusUnprocessableEntity:
		reason = metav1.StatusReasonInvalid
	case http.StatusServiceUnavailable:
		reason = metav1.StatusReasonServiceUnavailable
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(metav1.Status{ //nolint:errcheck // the client sees a truncated body.
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure, Code: int32(code), Reason: reason, Message: msg, //nolint:gosec // HTTP codes fit.
	})
}

// statusRecorder keeps only the status of a proxied probe.
type statusRecorder struct {
	header http.Header
	code   int
}

func (r *statusRecorder) Header() http.Header         { return r.header }
func (r *statusRecorder) Write(b []byte) (int, error) { return len(b), nil }
func (r *statusRecorder) WriteHeader(code int)        { r.code = code }
