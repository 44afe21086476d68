package garden

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// TestStartOnATakenPortIntegration takes the port Prepare chose before
// gardener-apiserver binds it, as another test binary's API server did in
// a CI run of stop 83: the real gardener-apiserver starts on another port
// and serves Shoots through the real kube-apiserver; and a second Stop after
// the first returns (it used to wait forever).
func TestStartOnATakenPortIntegration(t *testing.T) {
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	bin, err := Binary()
	if _, serr := os.Stat(filepath.Join(assets, "kube-apiserver")); assets == "" || serr != nil || err != nil {
		msg := "needs kube-apiserver and etcd in KUBEBUILDER_ASSETS and gardener-apiserver: run `make tools` and take tools/upstream/build.sh --env"
		if os.Getenv("REQUIRE_INTEGRATION") != "" && !testing.Short() {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	if testing.Short() {
		t.Skip("integration test: skipped with -short")
	}
	env := &envtest.Environment{BinaryAssetsDirectory: assets}
	g, err := Prepare(env, bin, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	taken := g.Port()
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(taken)))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close() //nolint:errcheck // the test's own listener
	if _, err := env.Start(); err != nil {
		t.Fatal(err)
	}
	defer env.Stop() //nolint:errcheck // best effort on the way out
	if err := g.StartIn(context.Background(), env); err != nil {
		t.Fatalf("gardener-apiserver did not start beside a taken port: %v", err)
	}
	if g.Port() == taken {
		t.Errorf("gardener-apiserver serves on port %d, the one taken", taken)
	}
	_ = g.Stop() //nolint:errcheck // returns none
	stopped := make(chan struct{})
	go func() { _ = g.Stop(); close(stopped) }() //nolint:errcheck // returns none
	select {
	case <-stopped:
	case <-time.After(30 * time.Second):
		t.Error("a second Stop has not returned after 30 s")
	}
}
