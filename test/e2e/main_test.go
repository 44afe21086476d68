//go:build e2e

// Package e2e drives the running local management plane (local/demo/up.sh)
// from Go, as Crossplane's own e2e suite does: each check is a named subtest
// whose time go test records, waits are watches bounded in seconds, and
// sections that do not touch each other's objects run concurrently.
//
// test/e2e/e2e.sh runs the sections not yet moved here and calls this suite
// where a moved section stood (docs/development.md maps each check of the
// shell suite to its subtest). Build and run it as e2e.sh does:
//
//	go test -c -tags e2e -o e2e.test ./test/e2e
//	COBALTCORE_DEMO=/tmp/cobaltcore-demo ./e2e.test -test.v -test.run '^TestPlane$'
package e2e

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"sigs.k8s.io/yaml"
)

// landscape is the running local management plane.
type landscape struct {
	// run is the demo's state directory: kubeconfigs, PIDs, logs.
	run string
	// repo is the repository's root: the binaries make xpkg put into the
	// images are under its _output/.
	repo string
	cfg  *rest.Config
	kube kubernetes.Interface
	dyn  dynamic.Interface

	mapperOnce sync.Once
	mapper     meta.RESTMapper
}

var plane *landscape

func TestMain(m *testing.M) {
	// The sections wait on the plane, not on the CPU: all of them run at
	// once. go test's default, one parallel test per core, would run two at
	// a time on two cores and hold a section back that another waits for.
	flag.Parse()
	if !flagSet("test.parallel") {
		_ = flag.Set("test.parallel", "64")
	}
	l, err := connect()
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		os.Exit(1)
	}
	plane = l
	// Reading Objects as v1alpha1 (1a) is deliberate: no deprecation
	// warnings in the checks' output.
	rest.SetDefaultWarningHandler(rest.NoWarnings{})
	// A watch that ends at its check's deadline is no error to print.
	klog.SetLogger(logr.Discard())
	os.Exit(m.Run())
}

func connect() (*landscape, error) {
	run := os.Getenv("COBALTCORE_DEMO")
	if run == "" {
		run = "/tmp/cobaltcore-demo"
	}
	for _, f := range []string{"kubeconfig", "crossplane.pid"} {
		if _, err := os.Stat(filepath.Join(run, f)); err != nil {
			return nil, fmt.Errorf("no demo runs in %s (%s is missing): start it with make demo", run, f)
		}
	}
	// go test runs a test binary in its package's directory; e2e.sh runs it
	// from the repository's root.
	repo, err := filepath.Abs(".")
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(repo, "go.mod")); err != nil {
		repo = filepath.Join(repo, "..", "..")
	}
	cfg, err := restConfig(filepath.Join(run, "kubeconfig"))
	if err != nil {
		return nil, err
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &landscape{run: run, repo: repo, cfg: cfg, kube: kube, dyn: dyn}, nil
}

func flagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// restConfig reads a kubeconfig. The suite's clients share the two cores
// with the plane: they ask at a rate a person's kubectl would, not faster.
func restConfig(kubeconfig string) (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("cannot read kubeconfig %s: %w", kubeconfig, err)
	}
	cfg.QPS, cfg.Burst = 50, 100
	cfg.UserAgent = "cobaltcore-e2e"
	return cfg, nil
}

// path is a file of the demo's state directory.
func (l *landscape) path(name string) string { return filepath.Join(l.run, name) }

// read returns a file's content, failing the test when it cannot.
func read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatalf("cannot read %s: %v", name, err)
	}
	return string(b)
}

// whoami is kubectl auth whoami: who the API server takes the client for.
func whoami(ctx context.Context, t *testing.T, c kubernetes.Interface) authenticationv1.UserInfo {
	t.Helper()
	r, err := c.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("cannot ask who the credential is: %v", err)
	}
	return r.Status.UserInfo
}

// allowed is kubectl auth can-i: whether the API server lets the client do a.
func allowed(ctx context.Context, t *testing.T, c kubernetes.Interface, a authorizationv1.ResourceAttributes) bool {
	t.Helper()
	r, err := c.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
		Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &a},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("cannot ask whether the credential may %s %s: %v", a.Verb, a.Resource, err)
	}
	return r.Status.Allowed
}

// asTenant is the tenant's view: a client acting as a person of the
// tenant's group, with only the RBAC the landscape gives a tenant namespace
// (examples/infrastructure/tenant-role.yaml), as kubectl --as does.
func asTenant(t *testing.T, tenant string) dynamic.Interface {
	t.Helper()
	return dynamic.NewForConfigOrDie(tenantConfig(tenant))
}

// tenantConfig is the plane's client configuration impersonating a person
// of the tenant's group.
func tenantConfig(tenant string) *rest.Config {
	cfg := rest.CopyConfig(plane.cfg)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: tenant + "-user", Groups: []string{tenant}}
	return cfg
}

// kubectl runs the real kubectl (KUBECTL, which e2e.sh sets, else the one on
// PATH) against the plane, bounded, and returns its output's lines: what a
// person reads.
func kubectl(ctx context.Context, args ...string) ([]string, error) {
	bin := os.Getenv("KUBECTL")
	if bin == "" {
		bin = "kubectl"
	}
	return lines(ctx, 30*time.Second, bin, append([]string{"--kubeconfig", plane.path("kubeconfig")}, args...)...)
}

// resourceOf maps a kind to the resource the API server serves it as.
func resourceOf(t *testing.T, gvk schema.GroupVersionKind) schema.GroupVersionResource {
	t.Helper()
	plane.mapperOnce.Do(func() {
		plane.mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(discovery.NewDiscoveryClientForConfigOrDie(plane.cfg)))
	})
	m, err := plane.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		t.Fatalf("the API server does not serve %s: %v", gvk, err)
	}
	return m.Resource
}

// object reads a YAML document into an object.
func object(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatalf("cannot read %.80q: %v", doc, err)
	}
	return u
}
