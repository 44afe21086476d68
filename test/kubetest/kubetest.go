// Package kubetest starts the real kube-apiserver and etcd (from the tool
// cache, see `make tools`) once per test binary, for integration tests that
// need an API server: CRD schemas, CEL rules, printer columns; with
// MainWithGarden, also the real gardener-apiserver aggregated into it
// (local/garden).
package kubetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/c5c3/consumer-plane/local/garden"
)

var (
	kube    client.Client
	config  *rest.Config
	skipMsg string
)

// Main runs a package's tests with an API server that has the CRDs of
// crdDirs installed. Call it from TestMain: os.Exit(kubetest.Main(m, dirs...)).
// Without the binaries, or with -short, the tests run and Client skips them.
func Main(m *testing.M, crdDirs ...string) int {
	return main(m, nil, crdDirs)
}

// MainWithGarden is Main with Gardener's API served by the real
// gardener-apiserver (core.gardener.cloud: Shoots, CloudProfiles, Projects),
// and the objects of gardenObjects (files) applied once it serves: the
// garden a landscape's operator sets up. Without gardener-apiserver the
// tests run and Client skips them, saying how to get it.
func MainWithGarden(m *testing.M, gardenObjects []string, crdDirs ...string) int {
	return main(m, gardenObjects, crdDirs)
}

// MainNodeRestricted is Main with the API server authorizing and
// admitting kubelets as a cluster's does (Gardener's Shoots among them):
// the Node authorizer and the NodeRestriction admission plugin, which
// keeps a kubelet to its own node and off the labels under
// node-restriction.kubernetes.io/. A test acts as a node's kubelet with
// AsNode.
func MainNodeRestricted(m *testing.M, crdDirs ...string) int {
	nodeRestricted = true
	return main(m, nil, crdDirs)
}

// nodeRestricted: see MainNodeRestricted.
var nodeRestricted bool

func main(m *testing.M, gardenObjects []string, crdDirs []string) int {
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if _, err := os.Stat(filepath.Join(assets, "kube-apiserver")); assets == "" || err != nil {
		skipMsg = fmt.Sprintf("needs kube-apiserver and etcd in KUBEBUILDER_ASSETS (%q): run `make test-integration`, which builds them with `make tools`", assets)
		return m.Run()
	}
	if isShort() {
		skipMsg = "integration test: skipped with -short"
		return m.Run()
	}
	env := &envtest.Environment{BinaryAssetsDirectory: assets, ErrorIfCRDPathMissing: true, CRDDirectoryPaths: crdDirs}
	if nodeRestricted {
		env.ControlPlane.GetAPIServer().Configure().
			Set("enable-admission-plugins", "NodeRestriction").
			Set("authorization-mode", "Node,RBAC")
	}
	var g *garden.Garden
	if gardenObjects != nil {
		bin, err := garden.Binary()
		if err != nil {
			skipMsg = "needs the real gardener-apiserver: " + err.Error()
			return m.Run()
		}
		dir, err := os.MkdirTemp("", "kubetest-garden-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir) //nolint:errcheck // a temporary directory
		if g, err = garden.Prepare(env, bin, dir); err != nil {
			fmt.Fprintf(os.Stderr, "cannot prepare the local garden: %v\n", err)
			return 1
		}
	}
	cfg, err := env.Start()
	if err != nil {
		fmt.Fprintf(os.Stderr, "cannot start kube-apiserver and etcd: %v\n", err)
		return 1
	}
	defer env.Stop() //nolint:errcheck // best effort on the way out
	if g != nil {
		defer g.Stop() //nolint:errcheck // best effort on the way out
		if err := g.StartIn(context.Background(), env); err != nil {
			fmt.Fprintf(os.Stderr, "cannot start gardener-apiserver: %v\n", err)
			return 1
		}
		if err := garden.Apply(context.Background(), cfg, gardenObjects...); err != nil {
			fmt.Fprintf(os.Stderr, "cannot create the garden's objects: %v\n", err)
			return 1
		}
	}
	config = cfg
	kube, err = client.New(cfg, client.Options{})
	if err != nil {
		fmt.Fprintf(os.Stderr, "cannot create a client: %v\n", err)
		return 1
	}
	return m.Run()
}

// Client returns the API server's client, or skips the test when there is
// none (and fails it instead when REQUIRE_INTEGRATION is set, as in
// `make test-integration`, so CI never skips).
func Client(t testing.TB) client.Client {
	t.Helper()
	if kube != nil {
		return kube
	}
	if os.Getenv("REQUIRE_INTEGRATION") != "" && !testing.Short() {
		t.Fatal(skipMsg)
	}
	t.Skip(skipMsg)
	return nil
}

// isShort reads -test.short before testing.Short may be called (flags are
// parsed by m.Run).
func isShort() bool {
	for _, a := range os.Args {
		if a == "-test.short" || a == "-test.short=true" {
			return true
		}
	}
	return false
}

// Config returns the API server's connection, for tests that run
// controllers against it; it skips (or fails) like Client.
func Config(t testing.TB) *rest.Config {
	t.Helper()
	Client(t)
	return rest.CopyConfig(config)
}

// AsNode returns a client that acts as the kubelet of node (user
// system:node:<node>, group system:nodes), by impersonation: the API
// server authorizes and admits its requests as the kubelet's, so they are
// only as a kubelet's are where it runs MainNodeRestricted.
func AsNode(t testing.TB, node string) client.Client {
	t.Helper()
	cfg := Config(t)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:node:" + node, Groups: []string{"system:nodes", "system:authenticated"}}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Until polls check every 100ms until it returns nil, failing the test with
// the last error after timeout: for state that a controller or agent
// converges on.
func Until(t testing.TB, what string, timeout time.Duration, check func() error) {
	t.Helper()
	var last error
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if last = check(); last == nil {
			return
		}
	}
	t.Fatalf("%s: not within %s: %v", what, timeout, last)
}
