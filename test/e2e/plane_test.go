//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	consumerv1alpha1 "github.com/c5c3/consumer-plane/apis/consumer/v1alpha1"
	"github.com/c5c3/consumer-plane/internal/pool"
)

// TestPlane: the example pools stand, the plane runs as installed and
// shipped with least privilege, and the inventory's and the agents'
// changes reach the claims (e2e.sh's sections
// 1, 1a, 1b, 1c, 2, 2b, 2c, 3 and 4). The sections after 1 and 2 read or
// change objects of their own, so they run concurrently.
func TestPlane(t *testing.T) {
	// The subtests that are not parallel run first, in order (1, then 2);
	// the parallel ones start together once they are done.
	t.Run("1 the example pools and control-plane clusters are Ready", examplePoolsReady)
	t.Run("1a core as in a cluster: its chart's RBAC, webhooks on", coreAsInACluster)
	t.Run("1b the Shoots live in the real Gardener API", shootsInGardener)
	t.Run("1c installed as a platform engineer installs it, running as shipped", installedAsShipped)
	t.Run("2 Server changes reach the claim through the watches", serverChangesReachTheClaim)
	t.Run("2b pools take their figures from the node agents", poolsReportFromAgents)
	t.Run("2c least privilege: the storage agent's Ceph user, the stretched pool's arbiter, the provider's metrics", leastPrivilege)
	t.Run("2d each pool's and control-plane cluster's layer (operators' CRDs, agents) comes from Flux, and a commit to a layer reaches every pool of its kind", layersFromFlux)
	t.Run("3 an under-provisioned pool", underProvisioned)
	t.Run("3b names longer than Gardener allows for Shoots (the C5C3 docs' hv-pool-compliance, eu-de-1-control-plane)", longNames)
	t.Run("4 a dedicated pool overlapping another pool's servers", labelOverlap)
	t.Run("4b a cloud whose catalog has no compute", cloudWithoutCompute)
}

// examples are the pools and control-plane clusters of the landscape when
// section 1 ran: the examples and section 0's. The sections after it make
// pools of their own, which these lists leave out.
var examples []ref

// claims lists the pools and control-plane clusters of the infrastructure
// namespace.
func claims(ctx context.Context, t *testing.T) []ref {
	t.Helper()
	var all []ref
	for _, r := range []schema.GroupVersionResource{controlPlaneClusters, hypervisorClusters, storageClusters} {
		l, err := plane.dyn.Resource(r).Namespace("infrastructure").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatalf("cannot list %s: %v", r.Resource, err)
		}
		for _, i := range l.Items {
			all = append(all, ref{gvr: r, namespace: "infrastructure", name: i.GetName()})
		}
	}
	return all
}

// provisioning names the docs' pools section 0 applied just before: they
// are still provisioning when this suite starts.
func provisioning(pool string) bool {
	return pool == "hv-pool-compliance" || pool == "st-pool-encrypted"
}

// agentsWithin bounds the wait for a pool's node agents: 90 s for a pool
// that is Ready, 420 s for one of section 0 (its Shoot, nodes and agents
// come first: 3b waits 300 s for hv-pool-compliance to be Ready; the
// agents report after it; measured on two cores: ~250 s after section 1).
func agentsWithin(pool string) time.Duration {
	if provisioning(pool) {
		return 420 * time.Second
	}
	return 90 * time.Second
}

// examplesOf are the examples of one kind.
func examplesOf(gvr schema.GroupVersionResource) []ref {
	var of []ref
	for _, e := range examples {
		if e.gvr == gvr {
			of = append(of, e)
		}
	}
	return of
}

func examplePoolsReady(t *testing.T) {
	examples = claims(t.Context(), t)
	for _, c := range examples {
		// The docs' pools of section 0 are still provisioning; 3b waits for them.
		if provisioning(c.name) {
			continue
		}
		t.Run(c.gvr.Resource+" "+c.name, func(t *testing.T) {
			eventually(t, 5*time.Second, c.String()+" is Ready", c, isReady)
		})
	}
}

// coreAsInACluster: core runs with its chart's ServiceAccount (the
// credential its process was given), allowed what the chart's roles, the
// RBAC manager and crossplane-rbac.yaml give it, and no more; and
// provider-kubernetes' conversion webhook serves.
func coreAsInACluster(t *testing.T) {
	t.Parallel()
	env, err := os.ReadFile(fmt.Sprintf("/proc/%s/environ", strings.TrimSpace(read(t, plane.path("crossplane.pid")))))
	if err != nil {
		t.Fatalf("cannot read core's environment: %v", err)
	}
	var kubeconfig string
	for _, kv := range strings.Split(string(env), "\x00") {
		if v, ok := strings.CutPrefix(kv, "KUBECONFIG="); ok {
			kubeconfig = v
		}
	}
	cfg, err := restConfig(kubeconfig)
	if err != nil {
		t.Fatalf("core's credential: %v", err)
	}
	core := kubernetes.NewForConfigOrDie(cfg)
	t.Run("core logs in as its chart's ServiceAccount", func(t *testing.T) {
		if who := whoami(t.Context(), t, core); who.Username != "system:serviceaccount:crossplane-system:crossplane" {
			t.Errorf("core's credential (%s) logs in as %q", kubeconfig, who.Username)
		}
	})
	permissions(t, "core", core,
		// The RBAC manager grants the composites; crossplane-rbac.yaml the
		// Shoots and the pools' layer Kustomizations; the chart
		// provider-kubernetes' Objects.
		[]authorizationv1.ResourceAttributes{
			{Verb: "create", Group: "c5c3.io", Resource: "xopenstackclusters"},
			{Verb: "create", Group: "crossplane.c5c3.io", Resource: "xopenstackclusters"},
			{Verb: "create", Group: "core.gardener.cloud", Resource: "shoots", Namespace: "garden-c5c3"},
			{Verb: "create", Group: "kubernetes.crossplane.io", Resource: "objects"},
			{Verb: "create", Group: "kustomize.toolkit.fluxcd.io", Resource: "kustomizations", Namespace: "crossplane-system"},
		},
		[]authorizationv1.ResourceAttributes{
			{Verb: "create", Group: "rbac.authorization.k8s.io", Resource: "clusterrolebindings"},
			{Verb: "*", Group: "*", Resource: "*"},
			{Verb: "create", Resource: "pods", Namespace: "kube-system"},
			// flux-system's Kustomizations apply as Flux's cluster-admin.
			{Verb: "patch", Group: "kustomize.toolkit.fluxcd.io", Resource: "kustomizations", Namespace: "flux-system"},
			{Verb: "create", Group: "kustomize.toolkit.fluxcd.io", Resource: "kustomizations", Namespace: "flux-system"},
		})
	// Where core may write Kustomizations, only ones that apply into
	// another cluster (layer-kustomization-policy.yaml): one without
	// spec.kubeConfig would apply into this one as any ServiceAccount of
	// crossplane-system. Server-side dry runs, as core.
	coreDyn := dynamic.NewForConfigOrDie(cfg)
	layer := func(kubeConfig bool) *unstructured.Unstructured {
		spec := map[string]any{
			"interval": "10m", "path": "./clusters/pools/hypervisor", "prune": true,
			"sourceRef":          map[string]any{"kind": "GitRepository", "name": "cobaltcore-cluster-layers"},
			"serviceAccountName": "crossplane-rbac-manager",
		}
		if kubeConfig {
			spec["kubeConfig"] = map[string]any{"secretRef": map[string]any{"name": "hypervisor-hv-pool-a-kubeconfig", "key": "kubeconfig"}}
		}
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
			"metadata": map[string]any{"name": "e2e-core-layer", "namespace": "crossplane-system"}, "spec": spec,
		}}
	}
	dryRun := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	t.Run("core's Kustomization without spec.kubeConfig (into the management cluster) is refused", func(t *testing.T) {
		_, err := coreDyn.Resource(kustomizations).Namespace("crossplane-system").Create(t.Context(), layer(false), dryRun)
		if err == nil || !strings.Contains(err.Error(), "cobaltcore-core-kustomizations") || !strings.Contains(err.Error(), "spec.kubeConfig.secretRef") {
			t.Fatalf("core creates a Kustomization applying into the management cluster: %v", err)
		}
		t.Logf("%.300s", err)
	})
	t.Run("core's Kustomization into a pool's cluster (spec.kubeConfig) is admitted", func(t *testing.T) {
		if _, err := coreDyn.Resource(kustomizations).Namespace("crossplane-system").Create(t.Context(), layer(true), dryRun); err != nil {
			t.Fatalf("core's layer Kustomization: %v", err)
		}
	})
	// An Object read in v1alpha1 (stored as v1alpha2) is converted by
	// provider-kubernetes' webhook.
	t.Run("provider-kubernetes' conversion webhook converts Objects", func(t *testing.T) {
		objs, err := plane.dyn.Resource(kubernetesObjectsA).List(t.Context(), metav1.ListOptions{Limit: 1})
		switch {
		case err != nil:
			t.Errorf("reading Objects as v1alpha1: %v", err)
		case len(objs.Items) == 0:
			t.Errorf("reading Objects as v1alpha1: there are none")
		case objs.Items[0].GetAPIVersion() != "kubernetes.crossplane.io/v1alpha1":
			t.Errorf("an Object read as v1alpha1 comes as %s", objs.Items[0].GetAPIVersion())
		default:
			t.Logf("%s %s", objs.Items[0].GetAPIVersion(), objs.Items[0].GetName())
		}
	})
}

// permissions checks, each as a check of its own, that the API server lets
// the client named who do each of may and none of mayNot (kubectl auth
// can-i).
func permissions(t *testing.T, who string, c kubernetes.Interface, may, mayNot []authorizationv1.ResourceAttributes) {
	t.Helper()
	for _, a := range may {
		t.Run(fmt.Sprintf("%s may %s", who, attributes(a)), func(t *testing.T) {
			if !allowed(t.Context(), t, c, a) {
				t.Errorf("%s may not %s", who, attributes(a))
			}
		})
	}
	for _, a := range mayNot {
		t.Run(fmt.Sprintf("%s may not %s", who, attributes(a)), func(t *testing.T) {
			if allowed(t.Context(), t, c, a) {
				t.Errorf("%s may %s: more than it is given", who, attributes(a))
			}
		})
	}
}

func attributes(a authorizationv1.ResourceAttributes) string {
	s := a.Verb + " " + a.Resource
	if a.Group != "" {
		s += "." + a.Group
	}
	if a.Namespace != "" {
		s += " in " + a.Namespace
	}
	return s
}

// shootsInGardener: gardener-apiserver answers for core.gardener.cloud
// through the aggregator, defaults the Shoots, issues their kubeconfigs,
// and refuses a Shoot its CloudProfile cannot satisfy, which the claim
// says with Gardener's message.
func shootsInGardener(t *testing.T) {
	t.Parallel()
	t.Run("core.gardener.cloud/v1beta1 is served by gardener-apiserver (APIService Available)", func(t *testing.T) {
		svc, err := plane.dyn.Resource(apiServices).Get(t.Context(), "v1beta1.core.gardener.cloud", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("APIService v1beta1.core.gardener.cloud: %v", err)
		}
		name, _, _ := unstructured.NestedString(svc.Object, "spec", "service", "name")
		if available := apiServiceAvailable(svc); name != "gardener-apiserver" || !available {
			t.Errorf("APIService v1beta1.core.gardener.cloud is served by %q, Available %v; want gardener-apiserver, true", name, available)
		}
	})
	t.Run("no Shoot CRD is installed", func(t *testing.T) {
		if _, err := plane.dyn.Resource(crds).Get(t.Context(), "shoots.core.gardener.cloud", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("a Shoot CRD is installed (or reading it failed: %v)", err)
		}
	})
	t.Run("the Shoots are those of the pools and control-plane clusters", func(t *testing.T) {
		all, err := plane.dyn.Resource(shoots).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatalf("cannot list Shoots: %v", err)
		}
		if len(all.Items) != len(examples) {
			t.Errorf("%d Shoots for %d pools and control-plane clusters", len(all.Items), len(examples))
		}
	})
	close(shootsCounted)
	// The functions ask for Kubernetes 1.34; Gardener stores the newest
	// 1.34 patch of the CloudProfile.
	t.Run("Gardener defaulted cp-eu-de-1's Kubernetes version 1.34 to the CloudProfile's 1.34.2", func(t *testing.T) {
		shoot, err := get[gardencorev1beta1.Shoot](t.Context(), ref{gvr: shoots, namespace: "garden-c5c3", name: "cp-eu-de-1"})
		if err != nil {
			t.Fatalf("Shoot cp-eu-de-1: %v", err)
		}
		if v := shoot.Spec.Kubernetes.Version; v != "1.34.2" {
			t.Errorf("cp-eu-de-1's Kubernetes version is %q, want Gardener's default 1.34.2", v)
		}
	})
	// The provider's kubeconfigs come from Gardener's shoots/adminkubeconfig:
	// a client certificate of Gardener's admins group for the Shoot's cluster.
	t.Run("hv-pool-a's kubeconfig, issued by Gardener's shoots/adminkubeconfig, logs into its cluster as a Gardener admin", func(t *testing.T) {
		sec, err := plane.kube.CoreV1().Secrets("crossplane-system").Get(t.Context(), "hypervisor-hv-pool-a-kubeconfig", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("hv-pool-a's kubeconfig: %v", err)
		}
		cfg, err := clientcmd.RESTConfigFromKubeConfig(sec.Data["kubeconfig"])
		if err != nil {
			t.Fatalf("hv-pool-a's kubeconfig: %v", err)
		}
		if who := whoami(t.Context(), t, kubernetes.NewForConfigOrDie(cfg)); !slices.Contains(who.Groups, "gardener.cloud:system:admins") {
			t.Errorf("hv-pool-a's kubeconfig logs into its cluster as %q of %v, not a Gardener admin", who.Username, who.Groups)
		}
	})

	// Gardener refuses a Shoot its CloudProfile cannot satisfy: the pool's
	// claim says so with Gardener's own message.
	ctx := t.Context()
	badZone := ref{gvr: controlPlaneClusters, namespace: "infrastructure", name: "e2e-bad-zone"}
	claim := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "crossplane.c5c3.io/v1alpha1", "kind": "ControlPlaneCluster",
		"metadata": map[string]any{"name": badZone.name, "namespace": badZone.namespace},
		"spec": map[string]any{
			"region": "eu-de-1", "kubernetesVersion": "1.34", "workers": int64(3), "maxWorkers": int64(3),
			"machineType": "baremetal-control-plane", "highAvailability": false,
			"zones": []any{"eu-de-1a", "eu-de-1d"},
		},
	}}
	if _, err := plane.dyn.Resource(badZone.gvr).Namespace(badZone.namespace).Create(ctx, claim, metav1.CreateOptions{}); err != nil {
		t.Fatalf("cannot create %s: %v", badZone, err)
	}
	t.Cleanup(func() {
		_ = plane.dyn.Resource(badZone.gvr).Namespace(badZone.namespace).Delete(context.Background(), badZone.name, metav1.DeleteOptions{})
	})
	var says string
	eventually(t, 120*time.Second, "a control-plane cluster in zone eu-de-1d (not in region eu-de-1): Gardener refuses its Shoot", badZone,
		func(c *conditioned) (bool, string) {
			got := c.condition("ShootReady")
			says = fmt.Sprintf("%s: %s", got.Reason, got.Message)
			return got.Reason == "Refused" && strings.Contains(got.Message, `Unsupported value: "eu-de-1d"`), says
		})
	t.Logf("... its claim says: %.300s", says)
	t.Run("... and no Shoot exists for it", func(t *testing.T) { noShoot(t.Context(), t, badZone.name) })
}

// isReady holds when the claim's Ready condition is True.
func isReady(c *conditioned) (bool, string) {
	got := c.condition("Ready")
	return got.Status == corev1.ConditionTrue, fmt.Sprintf("Ready is %s %q: %q", got.Status, got.Reason, got.Message)
}

func apiServiceAvailable(svc *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(svc.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == "Available" {
			return m["status"] == "True"
		}
	}
	return false
}

// serverChangesReachTheClaim: hv-pool-us has 92 servers for 75 to 90
// workers. 5 failing leave 87: enough for its workers, not for its
// maxWorkers (18 would leave it short of its workers: UnderProvisioned, a
// different verdict). The provider's ServerInventory sees the change at
// once; core then reconciles the composite because it watches what it
// composed, not at the composite's steady minute (its TTL once Ready): 4 to
// 9 s on an idle demo. Beside the converging clouds a change also waits for
// the reconcile in flight and the next one (17 to 36 s in stop 73's CI
// runs), so each wait is bounded by that minute, not below it: a change
// that only the clock brought could pass too, which the idle figure rules
// out, not this bound.
// It runs alone, before the sections that make pools of their own, and on
// the one example pool no example cloud uses: while the tenants' clouds
// converge, a pool they use is reconciled back to back (8.6 s a reconcile
// on two cores, core applying its ~25 composed resources one after another),
// a change waits for the reconcile in flight, and on hv-pool-a the claim
// took up to 51 s (stop 72's landing CI; docs/development.md).
func serverChangesReachTheClaim(t *testing.T) {
	hvPoolUS := ref{gvr: hypervisorClusters, namespace: "infrastructure", name: "hv-pool-us"}
	setState := func(state string) {
		for i := 1; i <= 5; i++ {
			patch := fmt.Appendf(nil, `{"status":{"state":%q}}`, state)
			if _, err := plane.dyn.Resource(servers).Patch(context.Background(), fmt.Sprintf("hv-pool-us-%03d", i), types.MergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
				t.Errorf("cannot set Server hv-pool-us-%03d %s: %v", i, state, err)
			}
		}
	}
	setState("Error")
	t.Cleanup(func() { setState("Available") })
	eventually(t, time.Minute, "5 failed Servers: hv-pool-us reports MaxWorkersUnreachable", hvPoolUS,
		inventoryIs(pool.ReasonMaxWorkersUnreachable, "", 87))
	eventually(t, time.Minute, "... counting 87 usable servers", hvPoolUS, inventoryIs("", "exceeds the 87 servers", 87))
	setState("Available")
	eventually(t, time.Minute, "the Servers return: hv-pool-us is Sufficient again", hvPoolUS, inventoryIs(pool.ReasonInventorySufficient, "", 92))
	eventually(t, time.Minute, "... with all 92 usable servers", hvPoolUS, inventoryIs("", "92 usable servers", 92))
}

// hypervisorClaim is a HypervisorCluster claim as the suite reads it: the
// project's status of a hypervisor pool beside Crossplane's conditions.
type hypervisorClaim struct {
	Status struct {
		xpv2.ConditionedStatus                   `json:",inline"`
		consumerv1alpha1.HypervisorClusterStatus `json:",inline"`
	} `json:"status"`
}

// inventoryIs holds when the pool's inventory verdict (its
// InventorySufficient condition) has the reason, its message contains text,
// and the pool counts usable servers.
func inventoryIs(reason, text string, usable int32) func(*hypervisorClaim) (bool, string) {
	return func(c *hypervisorClaim) (bool, string) {
		got := c.Status.GetCondition(xpv2.ConditionType(pool.ConditionInventory))
		var counted int32 = -1
		if c.Status.Inventory != nil {
			counted = c.Status.Inventory.Usable
		}
		return (reason == "" || string(got.Reason) == reason) && strings.Contains(got.Message, text) && counted == usable,
			fmt.Sprintf("InventorySufficient is %s %q: %q; status.inventory.usable %d", got.Status, got.Reason, got.Message, counted)
	}
}
