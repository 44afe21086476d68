package hypervisorinventory

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/consumer-plane/apis/kvm/v1alpha1"
	"github.com/c5c3/consumer-plane/provider/internal/clients/kvm"
	"github.com/c5c3/consumer-plane/provider/internal/clients/watch"
	"github.com/c5c3/consumer-plane/provider/internal/controller/viewtest"
	"github.com/c5c3/consumer-plane/test/kubetest"
)

// One API server plays both parts: the management cluster the provider
// reconciles in, and the pool cluster (with the hypervisor operator's CRDs
// of the pinned module) whose Hypervisors it observes.
func TestMain(m *testing.M) {
	os.Exit(kubetest.Main(m, "../../../../package/crds", "../../../../../cluster/crds/hypervisor-operator"))
}

// patience bounds every wait. The controller polls only hourly, so a change
// seen within it came through the watch.
const patience = 20 * time.Second

// hv is a Hypervisor as the hypervisor operator creates it and the
// hypervisor agent fills its status.
type hv struct {
	name        string
	zone        string // its topology.kubernetes.io/zone label
	maintenance string
	libvirt     *metav1.ConditionStatus // the agent's LibvirtConnected; nil: no agent reported
	ready       *metav1.ConditionStatus // the operator's Ready; nil: not set
	capacity    map[string]string
	effective   map[string]string
	allocation  map[string]string
	instances   int64
}

func ptr(s metav1.ConditionStatus) *metav1.ConditionStatus { return &s }

// TestHypervisorInventoryIntegration observes Hypervisors in every state an
// agent and the operator put them in, through a ProviderConfig's kubeconfig,
// then sees a node reconnect, go into maintenance and leave within seconds.
func TestHypervisorInventoryIntegration(t *testing.T) {
	kube, cfg := start(t)
	ctx := context.Background()

	hvs := []hv{
		// Overcommit 2 on CPU; 10 vCPUs and 20 GiB held by 3 domains.
		{name: "node-1", zone: "eu-de-1a", libvirt: ptr(metav1.ConditionTrue), ready: ptr(metav1.ConditionTrue),
			capacity: map[string]string{"cpu": "64", "memory": "256Gi"}, effective: map[string]string{"cpu": "128", "memory": "256Gi"},
			allocation: map[string]string{"cpu": "10", "memory": "20Gi"}, instances: 3},
		// No operator (no Ready), no overcommit, overbooked in CPU.
		{name: "node-2", zone: "eu-de-1b", libvirt: ptr(metav1.ConditionTrue),
			capacity: map[string]string{"cpu": "32", "memory": "128Gi"}, allocation: map[string]string{"cpu": "40", "memory": "8Gi"}, instances: 5},
		{name: "node-3", maintenance: "manual", libvirt: ptr(metav1.ConditionTrue), capacity: map[string]string{"cpu": "32", "memory": "128Gi"}},
		{name: "node-4", libvirt: ptr(metav1.ConditionFalse), capacity: map[string]string{"cpu": "32", "memory": "128Gi"}},
		{name: "node-5"},
		{name: "node-6", libvirt: ptr(metav1.ConditionTrue), ready: ptr(metav1.ConditionFalse), capacity: map[string]string{"cpu": "32", "memory": "128Gi"}},
	}
	for _, h := range hvs {
		createHypervisor(ctx, t, kube, h)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "pool-kubeconfig", Namespace: "default"}, Data: map[string][]byte{"kubeconfig": kubetest.Kubeconfig(t, cfg)}}
	bad := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "pool-bad", Namespace: "default"}, Data: map[string][]byte{"kubeconfig": []byte("not: a: kubeconfig")}}
	for _, o := range []client.Object{secret, bad, providerConfig("pool", secret.Name), providerConfig("pool-bad", bad.Name)} {
		if err := kube.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	inv := inventory("hypervisor-hv-pool-it", "pool")
	if err := kube.Create(ctx, inv); err != nil {
		t.Fatal(err)
	}

	want := v1alpha1.HypervisorInventoryObservation{
		Hypervisors: 6, InService: 2, Maintenance: 1, Disconnected: 2, NotReady: 1, Instances: 8,
		Capacity:          v1alpha1.Resources{VCPUs: 96, MemoryGiB: 384},
		EffectiveCapacity: v1alpha1.Resources{VCPUs: 160, MemoryGiB: 384},
		Allocation:        v1alpha1.Resources{VCPUs: 50, MemoryGiB: 28},
		// node-1: 118 vCPUs, 236 GiB; node-2 is overbooked in CPU: 0, 120 GiB.
		Available: v1alpha1.Resources{VCPUs: 118, MemoryGiB: 356},
		NotInService: []v1alpha1.HypervisorNotInService{
			{Name: "node-3", Reason: ReasonMaintenance, Message: "manual maintenance: planned"},
			{Name: "node-4", Reason: ReasonDisconnected, Message: "cannot connect to libvirt"},
			{Name: "node-5", Reason: ReasonNotReporting, Message: "no hypervisor agent has reported this node yet"},
			{Name: "node-6", Reason: ReasonNotReady, Message: "Onboarding: tests running"},
		},
		// Every node, by name, with its zone: what the pool gives clouds by name.
		Nodes: []v1alpha1.HypervisorNode{
			{Name: "node-1", Zone: "eu-de-1a", InService: true, Instances: 3},
			{Name: "node-2", Zone: "eu-de-1b", InService: true, Instances: 5},
			{Name: "node-3"}, {Name: "node-4"}, {Name: "node-5"}, {Name: "node-6"},
		},
	}
	t.Run("counts every state", func(t *testing.T) { waitFor(ctx, t, kube, inv.Name, want) })

	t.Run("a node whose agent reconnects is in service within seconds", func(t *testing.T) {
		setLibvirt(ctx, t, kube, "node-4", metav1.ConditionTrue)
		w := want
		w.InService, w.Disconnected = 3, 1
		w.Capacity = v1alpha1.Resources{VCPUs: 128, MemoryGiB: 512}
		w.EffectiveCapacity = v1alpha1.Resources{VCPUs: 192, MemoryGiB: 512}
		w.Available = v1alpha1.Resources{VCPUs: 150, MemoryGiB: 484}
		w.NotInService = []v1alpha1.HypervisorNotInService{want.NotInService[0], want.NotInService[2], want.NotInService[3]}
		w.Nodes = slices.Clone(want.Nodes)
		w.Nodes[3].InService = true
		waitFor(ctx, t, kube, inv.Name, w)
		setLibvirt(ctx, t, kube, "node-4", metav1.ConditionFalse)
		waitFor(ctx, t, kube, inv.Name, want)
	})

	t.Run("a removed Hypervisor leaves the count", func(t *testing.T) {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(kvm.HypervisorGVK)
		u.SetName("node-5")
		if err := kube.Delete(ctx, u); err != nil {
			t.Fatal(err)
		}
		w := want
		w.Hypervisors, w.Disconnected = 5, 1
		w.NotInService = []v1alpha1.HypervisorNotInService{want.NotInService[0], want.NotInService[1], want.NotInService[3]}
		w.Nodes = slices.Delete(slices.Clone(want.Nodes), 4, 5)
		waitFor(ctx, t, kube, inv.Name, w)
	})

	t.Run("an invalid kubeconfig is reported, naming the ProviderConfig, and the inventory still deletes", func(t *testing.T) {
		b := inventory("bad-credentials", "pool-bad")
		if err := kube.Create(ctx, b); err != nil {
			t.Fatal(err)
		}
		const msg = `connect failed: ProviderConfig "pool-bad": the kubeconfig of the pool cluster is not valid`
		kubetest.Until(t, "the bad kubeconfig reported", patience, func() error {
			got := &v1alpha1.HypervisorInventory{}
			if err := kube.Get(ctx, client.ObjectKeyFromObject(b), got); err != nil {
				return err
			}
			if c := got.GetCondition(xpv2.TypeSynced); c.Status != corev1.ConditionFalse || !strings.HasPrefix(c.Message, msg) {
				return fmt.Errorf("Synced %s: %q", c.Status, c.Message)
			}
			return nil
		})
		// A pool's Shoot goes with its inventory: deleting must not need the cluster.
		if err := kube.Delete(ctx, b); err != nil {
			t.Fatal(err)
		}
		kubetest.Until(t, "the inventory of an unreachable cluster deleted", patience, func() error {
			if err := kube.Get(ctx, client.ObjectKeyFromObject(b), &v1alpha1.HypervisorInventory{}); !kerrors.IsNotFound(err) {
				return fmt.Errorf("still there: %v", err)
			}
			return nil
		})
	})

	t.Run("deleting the inventory leaves the Hypervisors", func(t *testing.T) {
		if err := kube.Delete(ctx, inv); err != nil {
			t.Fatal(err)
		}
		kubetest.Until(t, "the inventory gone", patience, func() error {
			if err := kube.Get(ctx, client.ObjectKeyFromObject(inv), &v1alpha1.HypervisorInventory{}); !kerrors.IsNotFound(err) {
				return fmt.Errorf("still there: %v", err)
			}
			return nil
		})
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(kvm.HypervisorGVK.GroupVersion().WithKind("HypervisorList"))
		if err := kube.List(ctx, l); err != nil {
			t.Fatal(err)
		}
		if len(l.Items) != 5 {
			t.Errorf("%d Hypervisors after deleting the inventory, want 5", len(l.Items))
		}
	})
}

func start(t *testing.T) (client.Client, *rest.Config) {
	t.Helper()
	mgr := kubetest.Manager(t, clientgoscheme.AddToScheme, v1alpha1.AddToScheme)
	o := controller.Options{Logger: logging.NewNopLogger(), GlobalRateLimiter: ratelimiter.NewGlobal(10), PollInterval: time.Hour, MaxConcurrentReconciles: 2}
	if err := Setup(mgr, o, kvm.NewClusters(watch.DefaultClusters, time.Hour)); err != nil {
		t.Fatal(err)
	}
	return kubetest.Start(t, mgr), mgr.GetConfig()
}

// createHypervisor creates a Hypervisor with the spec the operator gives it
// and writes its status as the agent and the operator would.
func createHypervisor(ctx context.Context, t *testing.T, kube client.Client, h hv) {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{
			"aggregates": []any{}, "allowedProjects": []any{}, "customTraits": []any{},
			"createCertManagerCertificate": false, "evacuateOnReboot": false, "highAvailability": true,
			"installCertificate": false, "lifecycleEnabled": true, "reboot": false, "skipTests": true,
		},
	}}
	u.SetGroupVersionKind(kvm.HypervisorGVK)
	u.SetName(h.name)
	if h.zone != "" {
		u.SetLabels(map[string]string{v1alpha1.LabelZone: h.zone})
	}
	if h.maintenance != "" {
		_ = unstructured.SetNestedField(u.Object, h.maintenance, "spec", "maintenance")   //nolint:errcheck // spec is a map.
		_ = unstructured.SetNestedField(u.Object, "planned", "spec", "maintenanceReason") //nolint:errcheck // spec is a map.
	}
	if err := kube.Create(ctx, u); err != nil {
		t.Fatal(err)
	}
	now := metav1.Now().UTC().Format(time.RFC3339)
	var conds []any
	if h.libvirt != nil {
		msg := "connected to qemu:///system"
		if *h.libvirt != metav1.ConditionTrue {
			msg = "cannot connect to libvirt"
		}
		conds = append(conds, map[string]any{"type": kvm.ConditionLibvirt, "status": string(*h.libvirt), "reason": "Agent", "message": msg, "lastTransitionTime": now})
	}
	if h.ready != nil {
		reason, msg := "Ready", "ready"
		if *h.ready != metav1.ConditionTrue {
			reason, msg = "Onboarding", "tests running"
		}
		conds = append(conds, map[string]any{"type": kvm.ConditionReady, "status": string(*h.ready), "reason": reason, "message": msg, "lastTransitionTime": now})
	}
	status := map[string]any{"numInstances": h.instances}
	for k, m := range map[string]map[string]string{"capacity": h.capacity, "effectiveCapacity": h.effective, "allocation": h.allocation} {
		if m != nil {
			q := map[string]any{}
			for r, v := range m {
				q[r] = v
			}
			status[k] = q
		}
	}
	if conds != nil {
		status["conditions"] = conds
	}
	u.Object["status"] = status
	if err := kube.Status().Update(ctx, u); err != nil {
		t.Fatal(err)
	}
}

// setLibvirt sets a Hypervisor's LibvirtConnected, as its agent does.
func setLibvirt(ctx context.Context, t *testing.T, kube client.Client, name string, s metav1.ConditionStatus) {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(kvm.HypervisorGVK)
	if err := kube.Get(ctx, client.ObjectKey{Name: name}, u); err != nil {
		t.Fatal(err)
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions") //nolint:errcheck // absent is empty.
	for _, c := range conds {
		if m := c.(map[string]any); m["type"] == kvm.ConditionLibvirt { //nolint:forcetypeassert // conditions are objects.
			m["status"] = string(s)
		}
	}
	if err := unstructured.SetNestedSlice(u.Object, conds, "status", "conditions"); err != nil {
		t.Fatal(err)
	}
	if err := kube.Status().Update(ctx, u); err != nil {
		t.Fatal(err)
	}
}

func providerConfig(name, secret string) *v1alpha1.ProviderConfig {
	return &v1alpha1.ProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.ProviderConfigSpec{Credentials: v1alpha1.ClusterCredentials{
			Source: xpv2.CredentialsSourceSecret,
			CommonCredentialSelectors: xpv2.CommonCredentialSelectors{SecretRef: &xpv2.SecretKeySelector{
				SecretReference: xpv2.SecretReference{Name: secret, Namespace: "default"}, Key: "kubeconfig",
			}},
		}},
	}
}

func inventory(name, providerConfig string) *v1alpha1.HypervisorInventory {
	return &v1alpha1.HypervisorInventory{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.HypervisorInventorySpec{
			ClusterManagedResourceSpec: xpv2.ClusterManagedResourceSpec{ProviderConfigReference: &xpv2.Reference{Name: providerConfig}},
		},
	}
}

// waitFor waits until the inventory is Ready and observes want.
func waitFor(ctx context.Context, t *testing.T, kube client.Client, name string, want v1alpha1.HypervisorInventoryObservation) {
	t.Helper()
	viewtest.UntilObserved(ctx, t, kube, name, patience, func() *v1alpha1.HypervisorInventory { return &v1alpha1.HypervisorInventory{} },
		func(h *v1alpha1.HypervisorInventory) v1alpha1.HypervisorInventoryObservation {
			return h.Status.AtProvider
		}, want)
}
