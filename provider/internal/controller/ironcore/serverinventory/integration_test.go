package serverinventory

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/go-logr/logr"
	metalv1alpha1 "github.com/ironcore-dev/metal-operator/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/c5c3/consumer-plane/apis/ironcore/v1alpha1"
	"github.com/c5c3/consumer-plane/provider/internal/clients/ironcore"
	"github.com/c5c3/consumer-plane/provider/internal/clients/watch"
	"github.com/c5c3/consumer-plane/provider/internal/controller/viewtest"
	"github.com/c5c3/consumer-plane/test/kubetest"
)

// One API server plays both parts: the management cluster the provider
// reconciles in, and the IronCore metal cluster (the metal-operator CRDs of
// the pinned module are installed) whose Servers it observes.
func TestMain(m *testing.M) {
	os.Exit(kubetest.Main(m, "../../../../package/crds", "../../../../../cluster/crds/metal-operator"))
}

// patience bounds every wait. The controller polls only hourly, so a change
// seen within it came through the watch.
const patience = 20 * time.Second

// TestServerInventoryIntegration observes Servers in every metal-operator
// state through a ProviderConfig's kubeconfig, then changes, removes and
// restores Servers and sees each change in the observation within seconds.
func TestServerInventoryIntegration(t *testing.T) {
	kube, cfg := start(t)
	ctx := context.Background()

	const pool = "hv-pool-it"
	labels := map[string]string{"c5c3.io/machine-pool": pool}
	type srv struct {
		name, state, claim string
		labels             map[string]string
	}
	servers := []srv{
		{"it-avail-1", "Available", "", labels},
		{"it-avail-2", "Available", "", labels},
		{"it-own", "Reserved", "shoot--c5c3--hv-pool-it-hypervisor-z1-1", labels},
		{"it-other", "Reserved", "shoot--c5c3--hv-pool-b-hypervisor-z1-1", labels},
		{"it-maint", "Maintenance", "", labels},
		{"it-error", "Error", "", labels},
		{"it-disc", "Discovery", "", labels},
		{"it-released", "Released", "", labels},
		// Another machine pool's server is not counted.
		{"it-elsewhere", "Available", "", map[string]string{"c5c3.io/machine-pool": "st-pool-it"}},
	}
	for _, s := range servers {
		createServer(ctx, t, kube, s.name, s.labels, metalv1alpha1.ServerState(s.state), s.claim)
	}

	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "metal-kubeconfig", Namespace: "default"}, Data: map[string][]byte{"kubeconfig": kubetest.Kubeconfig(t, cfg)}}
	bad := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "metal-bad", Namespace: "default"}, Data: map[string][]byte{"kubeconfig": []byte("not: a: kubeconfig")}}
	for _, o := range []client.Object{secret, bad, providerConfig("metal", secret.Name), providerConfig("metal-bad", bad.Name)} {
		if err := kube.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	inv := &v1alpha1.ServerInventory{
		ObjectMeta: metav1.ObjectMeta{Name: "hypervisor-" + pool},
		Spec: v1alpha1.ServerInventorySpec{
			ClusterManagedResourceSpec: xpv2.ClusterManagedResourceSpec{ProviderConfigReference: &xpv2.Reference{Name: "metal"}},
			ForProvider:                v1alpha1.ServerInventoryParameters{ServerSelector: labels, ClaimNamePrefix: "shoot--c5c3--hv-pool-it-"},
		},
	}
	if err := kube.Create(ctx, inv); err != nil {
		t.Fatal(err)
	}

	// Every server has one processor of 64 threads, 512 GiB and four 8Ti
	// drives, as the metal-operator's CRD carries them (status.storages).
	capacity := func(n int64) v1alpha1.ServerCapacity {
		return v1alpha1.ServerCapacity{CPUs: 64 * n, MemoryGiB: 512 * n, DiskGiB: 32 << 10 * n}
	}
	want := v1alpha1.ServerInventoryObservation{
		Servers: 8, Available: 2, Claimed: 1, ClaimedByOthers: 1, Released: 1, Discovering: 1, Maintenance: 1, Failed: 1, Usable: 6, SmallestDiskGiB: 32 << 10,
		UsableCapacity: capacity(6), AvailableCapacity: capacity(2),
		ClaimedByOthersServers: []v1alpha1.ClaimedServer{{Server: "it-other", Claim: "default/shoot--c5c3--hv-pool-b-hypervisor-z1-1"}},
		FailedServers:          []string{"it-error"},
	}
	t.Run("counts every state", func(t *testing.T) { waitFor(ctx, t, kube, inv.Name, want) })

	t.Run("a server that fails shows within seconds", func(t *testing.T) {
		setState(ctx, t, kube, "it-avail-1", metalv1alpha1.ServerStateError)
		w := want
		w.Available, w.Failed, w.Usable = 1, 2, 5
		w.UsableCapacity, w.AvailableCapacity = capacity(5), capacity(1)
		w.FailedServers = []string{"it-avail-1", "it-error"}
		waitFor(ctx, t, kube, inv.Name, w)
	})

	t.Run("a server that returns shows within seconds", func(t *testing.T) {
		setState(ctx, t, kube, "it-avail-1", metalv1alpha1.ServerStateAvailable)
		waitFor(ctx, t, kube, inv.Name, want)
	})

	t.Run("a removed server and a relabelled one leave the count", func(t *testing.T) {
		if err := kube.Delete(ctx, &metalv1alpha1.Server{ObjectMeta: metav1.ObjectMeta{Name: "it-maint"}}); err != nil {
			t.Fatal(err)
		}
		s := &metalv1alpha1.Server{}
		if err := kube.Get(ctx, client.ObjectKey{Name: "it-released"}, s); err != nil {
			t.Fatal(err)
		}
		s.Labels = map[string]string{"c5c3.io/machine-pool": "st-pool-it"}
		if err := kube.Update(ctx, s); err != nil {
			t.Fatal(err)
		}
		w := want
		w.Servers, w.Maintenance, w.Released, w.Usable, w.UsableCapacity = 6, 0, 0, 4, capacity(4)
		waitFor(ctx, t, kube, inv.Name, w)
	})

	t.Run("an invalid kubeconfig is reported, naming the ProviderConfig", func(t *testing.T) {
		b := &v1alpha1.ServerInventory{
			ObjectMeta: metav1.ObjectMeta{Name: "bad-credentials"},
			Spec: v1alpha1.ServerInventorySpec{
				ClusterManagedResourceSpec: xpv2.ClusterManagedResourceSpec{ProviderConfigReference: &xpv2.Reference{Name: "metal-bad"}},
				ForProvider:                v1alpha1.ServerInventoryParameters{ServerSelector: labels},
			},
		}
		if err := kube.Create(ctx, b); err != nil {
			t.Fatal(err)
		}
		const msg = `connect failed: ProviderConfig "metal-bad": the kubeconfig of the metal cluster is not valid`
		poll(t, func() (bool, string) {
			got := &v1alpha1.ServerInventory{}
			if err := kube.Get(ctx, client.ObjectKeyFromObject(b), got); err != nil {
				return false, err.Error()
			}
			c := got.GetCondition(xpv2.TypeSynced)
			return c.Status == corev1.ConditionFalse && len(c.Message) >= len(msg) && c.Message[:len(msg)] == msg, c.Message
		})
		// Deleting must not need the metal cluster.
		if err := kube.Delete(ctx, b); err != nil {
			t.Fatal(err)
		}
		poll(t, func() (bool, string) {
			err := kube.Get(ctx, client.ObjectKeyFromObject(b), &v1alpha1.ServerInventory{})
			return kerrors.IsNotFound(err), fmt.Sprintf("still there: %v", err)
		})
	})

	t.Run("deleting the inventory leaves the servers", func(t *testing.T) {
		if err := kube.Delete(ctx, inv); err != nil {
			t.Fatal(err)
		}
		poll(t, func() (bool, string) {
			err := kube.Get(ctx, client.ObjectKeyFromObject(inv), &v1alpha1.ServerInventory{})
			return kerrors.IsNotFound(err), fmt.Sprintf("still there: %v", err)
		})
		l := &metalv1alpha1.ServerList{}
		if err := kube.List(ctx, l); err != nil {
			t.Fatal(err)
		}
		if len(l.Items) != len(servers)-1 {
			t.Errorf("%d servers after deleting the inventory, want %d", len(l.Items), len(servers)-1)
		}
	})
}

func start(t *testing.T) (client.Client, *rest.Config) {
	t.Helper()
	cfg := kubetest.Config(t)
	ctrl.SetLogger(logr.Discard())
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, v1alpha1.AddToScheme, metalv1alpha1.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: s, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	o := controller.Options{Logger: logging.NewNopLogger(), GlobalRateLimiter: ratelimiter.NewGlobal(10), PollInterval: time.Hour, MaxConcurrentReconciles: 2}
	if err := Setup(mgr, o, ironcore.NewClusters(watch.DefaultClusters, time.Hour)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = mgr.Start(ctx) }() //nolint:errcheck // ends with the test.
	kube, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	return kube, cfg
}

func createServer(ctx context.Context, t *testing.T, kube client.Client, name string, labels map[string]string, state metalv1alpha1.ServerState, claim string) {
	t.Helper()
	s := &metalv1alpha1.Server{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: metalv1alpha1.ServerSpec{SystemUUID: "uuid-" + name}}
	if claim != "" {
		s.Spec.ServerClaimRef = &metalv1alpha1.ImmutableObjectReference{Namespace: "default", Name: claim}
	}
	if err := kube.Create(ctx, s); err != nil {
		t.Fatal(err)
	}
	mem := resource.MustParse("512Gi")
	drive := resource.MustParse("8Ti")
	s.Status = metalv1alpha1.ServerStatus{State: state, TotalSystemMemory: &mem, Processors: []metalv1alpha1.Processor{{ID: "CPU0", TotalCores: 32, TotalThreads: 64}},
		Storages: []metalv1alpha1.Storage{{Name: "controller0", Drives: []metalv1alpha1.StorageDrive{
			{Name: "d0", Capacity: &drive}, {Name: "d1", Capacity: &drive}, {Name: "d2", Capacity: &drive}, {Name: "d3", Capacity: &drive}}}}}
	if err := kube.Status().Update(ctx, s); err != nil {
		t.Fatal(err)
	}
}

func setState(ctx context.Context, t *testing.T, kube client.Client, name string, state metalv1alpha1.ServerState) {
	t.Helper()
	s := &metalv1alpha1.Server{}
	if err := kube.Get(ctx, client.ObjectKey{Name: name}, s); err != nil {
		t.Fatal(err)
	}
	s.Status.State = state
	if err := kube.Status().Update(ctx, s); err != nil {
		t.Fatal(err)
	}
}

func providerConfig(name, secret string) *v1alpha1.ProviderConfig {
	return &v1alpha1.ProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.ProviderConfigSpec{Credentials: v1alpha1.MetalCredentials{
			Source: xpv2.CredentialsSourceSecret,
			CommonCredentialSelectors: xpv2.CommonCredentialSelectors{SecretRef: &xpv2.SecretKeySelector{
				SecretReference: xpv2.SecretReference{Name: secret, Namespace: "default"}, Key: "kubeconfig",
			}},
		}},
	}
}

// waitFor waits until the inventory is Ready and observes want.
func waitFor(ctx context.Context, t *testing.T, kube client.Client, name string, want v1alpha1.ServerInventoryObservation) {
	t.Helper()
	viewtest.UntilObserved(ctx, t, kube, name, patience, func() *v1alpha1.ServerInventory { return &v1alpha1.ServerInventory{} },
		func(s *v1alpha1.ServerInventory) v1alpha1.ServerInventoryObservation { return s.Status.AtProvider }, want)
}

func poll(t *testing.T, done func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for {
		ok, msg := done()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not within %s: %s", patience, msg)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
