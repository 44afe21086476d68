// Package kubernetestest starts a controller of the kubernetes.provider.c5c3.io
// group against the test API server, which plays both the management
// cluster and the remote one its ProviderConfigs reach.
package kubernetestest

import (
	"context"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"
	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/c5c3/consumer-plane/apis/kubernetes/v1alpha1"
	"github.com/c5c3/consumer-plane/provider/internal/clients/remotekube"
	"github.com/c5c3/consumer-plane/test/kubetest"
)

// Setup is a controller's Setup.
type Setup func(ctrl.Manager, controller.Options, *remotekube.Clients) error

// Start runs the controller setup adds until the test ends, polling every
// 2 s (a changed source is seen at the next poll), and returns a client of
// the API server.
func Start(t *testing.T, setup Setup) client.Client {
	t.Helper()
	cfg := kubetest.Config(t)
	ctrl.SetLogger(logr.Discard())
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, v1alpha1.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: s, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	o := controller.Options{Logger: logging.NewNopLogger(), GlobalRateLimiter: ratelimiter.NewGlobal(10), PollInterval: 2 * time.Second, MaxConcurrentReconciles: 2}
	if err := setup(mgr, o, remotekube.NewClients(clientgoscheme.Scheme, remotekube.DefaultClients, time.Hour)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = mgr.Start(ctx) }() //nolint:errcheck // ends with the test.
	kube, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	return kube
}
