package kubetest

import (
	"context"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// Manager returns a controller-runtime manager of the API server, for a
// test to add its controllers to: its scheme has the types of adds, it
// serves no metrics, and a controller may take a name a test before it in
// the package used (each test starts a manager of its own). It skips (or
// fails) like Client.
func Manager(t testing.TB, adds ...func(*runtime.Scheme) error) ctrl.Manager {
	t.Helper()
	cfg := Config(t)
	ctrl.SetLogger(logr.Discard())
	s := runtime.NewScheme()
	for _, add := range adds {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: s, Metrics: metricsserver.Options{BindAddress: "0"},
		Controller: ctrlconfig.Controller{SkipNameValidation: ptr.To(true)}})
	if err != nil {
		t.Fatal(err)
	}
	return mgr
}

// Start runs mgr until the test ends and returns a client of the API
// server with mgr's scheme that reads past mgr's cache.
func Start(t testing.TB, mgr ctrl.Manager) client.Client {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = mgr.Start(ctx) }() //nolint:errcheck // ends with the test.
	kube, err := client.New(mgr.GetConfig(), client.Options{Scheme: mgr.GetScheme()})
	if err != nil {
		t.Fatal(err)
	}
	return kube
}
