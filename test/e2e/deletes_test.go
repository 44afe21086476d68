//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/c5c3/consumer-plane/internal/pool"
)

var (
	cephPools = schema.GroupVersionResource{Group: "ceph.provider.c5c3.io", Version: "v1alpha1", Resource: "pools"}
	secrets   = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
)

// tenantClaimDeleted (9): deleting a tenant's claim removes its
// aggregates, volume types, Ceph pools and client, and OVN HA chassis
// groups from the real services, and leaves every other tenant's objects
// as they were; a Ceph pool holding the tenant's image stays under the
// default spec.dataPolicy (Retain), and goes with it under Delete, which
// the platform team sets and a tenant may not. All that holds although the
// provider, function-openstack-cluster, Crossplane core and kube-apiserver
// are killed while it is deleted (#54). Then the docs' cloud goes as it
// came, by its tenant, and the docs' pools with their Shoots.
func tenantClaimDeleted(t *testing.T) {
	ctx := t.Context()
	staging := tenantCloud{namespace: "team-a", name: "team-a-staging"}
	gone := staging.composite(t).Name
	// What every tenant holds in the real services before: afterwards,
	// only team-a-staging's are gone.
	before := realServices(ctx, t)

	// Its objects in the cloud are deleted through the cloud's APIs, so its
	// ControlPlane is in use by the ProviderConfigs they go through (and its
	// namespace by the ControlPlane): core's webhook refuses their deletion
	// until those objects are gone, whichever goes first.
	cp := ref{gvr: kubernetesObjectsA, name: gone + "-control-plane"}
	if eventuallyNil(t, 30*time.Second, "team-a-staging's ControlPlane Object is marked in use", markedInUse(cp)) {
		t.Run("deleting team-a-staging's ControlPlane before its cloud's objects is refused, naming a ProviderConfig", func(t *testing.T) {
			err := plane.dyn.Resource(cp.gvr).Delete(t.Context(), cp.name, metav1.DeleteOptions{})
			if err == nil || !strings.Contains(err.Error(), "in-use") || !strings.Contains(err.Error(), "ProviderConfig") {
				t.Fatalf("deleting %s: %v", cp, err)
			}
			t.Logf("%.300s", err)
		})
	}
	// Its tenant left an image in its volume pool: under the default
	// spec.dataPolicy (Retain) that Ceph pool stays, with the image.
	kept := gone + "-st-pool-a-volumes"
	tenantImage(t, "team-a-staging", kept)
	stagingNodes := shareOf(poolComposite(t, "hv-pool-a"), gone).Nodes
	deleteClaims(t, staging.claim())
	// Meanwhile the plane's own processes die, one after the other, while
	// team-a-staging is deleted and internal-stretched (applied as 9 began)
	// created: what follows shows nothing of team-a-staging is left, its
	// data stays and no other tenant's object went; 9f that
	// internal-stretched holds one object per managed resource.
	stagingLeft := composedFor(t, "team-a-staging")
	stretchedClaim := tenantCloud{namespace: "internal", name: "internal-stretched"}.claim()
	killedMidReconcile(t, func(ctx context.Context) (string, error) {
		left, err := stagingLeft(ctx)
		if err != nil {
			return "", err
		}
		st, err := get[cloudClaim](ctx, stretchedClaim)
		if err != nil {
			return "", err
		}
		var busy []string
		if len(left) > 0 {
			busy = append(busy, fmt.Sprintf("%d of team-a-staging's managed resources were being deleted", len(left)))
		}
		if r := st.Status.GetCondition("Ready"); r.Status != "True" {
			busy = append(busy, fmt.Sprintf("internal-stretched was being created (%s)", r.Reason))
		}
		return strings.Join(busy, " and "), nil
	})
	eventuallyNone(t, 240*time.Second, "team-a-staging: its managed resources are gone", stagingLeft)

	// The node it held of hv-pool-a is free: team-a-prod, waiting for 19
	// nodes there (6d) and first by name of the clouds waiting, grows onto it.
	prod := onHvPoolA[0].composite(t).Name
	if len(stagingNodes) != 1 {
		t.Errorf("team-a-staging held %v of hv-pool-a, not one node", stagingNodes)
	} else {
		n := stagingNodes[0]
		admin := openStackAdmin(t)
		cluster := shootCluster(t, poolComposite(t, "hv-pool-a").Status.ShootName)
		eventuallyNil(t, 180*time.Second, "team-a-staging's node "+n+" of hv-pool-a moves to team-a-prod: its aggregate and the node's label follow", func(ctx context.Context) error {
			p, err := poolCompositeOf(ctx, "hv-pool-a")
			if err != nil {
				return err
			}
			held := slices.Sorted(slices.Values(shareOf(p, prod).Nodes))
			if !slices.Contains(held, n) {
				return fmt.Errorf("team-a-prod holds %v", held)
			}
			aggs, err := admin.aggregates(ctx, t)
			if err != nil {
				return err
			}
			if got := sortedHosts(aggs[prod+"-hv-pool-a"]); !slices.Equal(got, held) {
				return fmt.Errorf("team-a-prod holds %v, its aggregate %v", held, got)
			}
			node, err := cluster.kube.CoreV1().Nodes().Get(ctx, n, metav1.GetOptions{})
			if err == nil && node.Labels[pool.LabelCloud] != prod {
				err = fmt.Errorf("node %s carries "+pool.LabelCloud+"=%q", n, node.Labels[pool.LabelCloud])
			}
			return err
		})
	}
	// Its OVN gateways went through the ssl: databases with its client
	// certificate, which stayed until its ProviderConfig had no users; then
	// the Secret went, with no finalizer left behind.
	eventuallyNone(t, 60*time.Second, "team-a-staging: its OVN ProviderConfig and client certificate Secret are gone", existing(
		ref{gvr: ovnProviderConfigs, name: gone},
		ref{gvr: secrets, namespace: "crossplane-system", name: gone + "-ovn-client-tls"},
	))
	now := realServices(ctx, t)
	stretched := tenantCloud{namespace: "internal", name: "internal-stretched"}.composite(t).Name
	for _, what := range slices.Sorted(maps.Keys(before)) {
		var left, others []string
		for _, s := range now[what] {
			switch {
			case s == kept:
			case strings.Contains(s, gone):
				left = append(left, s)
			default:
				others = append(others, s)
			}
		}
		t.Run(what+": team-a-staging's are gone from the real service", func(t *testing.T) {
			if len(left) > 0 {
				t.Errorf("left behind: %v", left)
			}
		})
		t.Run(what+": every other tenant's are untouched", func(t *testing.T) {
			// internal-stretched (9f's cloud, applied as this test began)
			// may still be adding its own: new ones are its, none went.
			was := slices.DeleteFunc(slices.Clone(before[what]), func(s string) bool { return strings.Contains(s, gone) })
			for _, s := range was {
				if !slices.Contains(others, s) {
					t.Errorf("%s went: were %v, are %v", s, was, others)
				}
			}
			for _, s := range others {
				if !slices.Contains(was, s) && !strings.Contains(s, stretched) {
					t.Errorf("%s is new and not internal-stretched's (%s): were %v, are %v", s, stretched, was, others)
				}
			}
		})
	}
	t.Run("dataPolicy Retain (the default): the Ceph pool "+kept+" is kept, detached, with the tenant's image", func(t *testing.T) {
		if !slices.Contains(now["cephpools"], kept) || !slices.Contains(rbd(t, "ls", kept), "tenant-volume-1") {
			t.Errorf("%s or its image went with team-a-staging", kept)
		}
	})
	dropCephPool(t, kept) // the platform team lets it go

	// The docs' cloud goes as it came, by its tenant, in its group; then the
	// docs' pools, whose Shoots go with them. The platform team let its data
	// go first (spec.dataPolicy: Delete), which its tenant may not do.
	docs := tenantCloud{namespace: "tenant-finance", name: "finance-prod"}
	docsXR := docs.composite(t).Name
	dvol := docsXR + "-st-pool-encrypted-volumes"
	deletePolicy := []byte(`{"spec":{"dataPolicy":"Delete"}}`)
	t.Run("the tenant may not set spec.dataPolicy", func(t *testing.T) {
		_, err := asTenant(t, docs.namespace).Resource(docs.claim().gvr).Namespace(docs.namespace).Patch(t.Context(), docs.name, types.MergePatchType, deletePolicy, metav1.PatchOptions{})
		if err == nil || !strings.Contains(err.Error(), "spec.dataPolicy is the platform team's choice") {
			t.Fatalf("the tenant sets spec.dataPolicy: Delete: %v", err)
		}
		t.Logf("%.300s", err)
	})
	if _, err := plane.dyn.Resource(docs.claim().gvr).Namespace(docs.namespace).Patch(ctx, docs.name, types.MergePatchType, deletePolicy, metav1.PatchOptions{}); err != nil {
		t.Fatalf("the platform team sets dataPolicy Delete on finance-prod: %v", err)
	}
	eventuallyNil(t, 120*time.Second, "the platform team sets dataPolicy Delete on finance-prod: its Ceph pools take it", func(ctx context.Context) error {
		p, err := plane.dyn.Resource(cephPools).Get(ctx, dvol, metav1.GetOptions{})
		if err == nil {
			if got := nested(p.Object, "spec", "forProvider", "dataPolicy"); got != "Delete" {
				err = fmt.Errorf("%s's dataPolicy is %q", dvol, got)
			}
		}
		return err
	})
	tenantImage(t, "finance-prod", dvol)
	if err := asTenant(t, docs.namespace).Resource(docs.claim().gvr).Namespace(docs.namespace).Delete(context.WithoutCancel(ctx), docs.name, metav1.DeleteOptions{}); err != nil {
		t.Errorf("the tenant deletes finance-prod: %v", err)
	}
	eventuallyGone(t, 240*time.Second, "the docs' finance-prod is deleted by its tenant", ref{gvr: xOpenStackClusters, name: docsXR})
	eventuallyNil(t, 60*time.Second, "dataPolicy Delete: its Ceph pool "+dvol+" went with the image", func(ctx context.Context) error {
		pools, err := cephCLI(ctx, "osd", "pool", "ls")
		if err == nil && slices.Contains(pools, dvol) {
			err = fmt.Errorf("%s is still in Ceph", dvol)
		}
		return err
	})
	deleteClaims(t, ref{gvr: hypervisorClusters, namespace: "infrastructure", name: "hv-pool-compliance"},
		ref{gvr: storageClusters, namespace: "infrastructure", name: "st-pool-encrypted"})
	for _, p := range []string{"hv-pool-compliance", "st-pool-encrypted"} {
		s := derivedShootName(p)
		eventuallyGone(t, 180*time.Second, "deleting "+p+" deletes its Shoot "+s, ref{gvr: shoots, namespace: "garden-c5c3", name: s})
	}
	var rack []ref
	for i := 1; i <= 20; i++ {
		rack = append(rack, ref{gvr: servers, name: fmt.Sprintf("docs-rack-1-%02d", i)})
	}
	for i := 1; i <= 3; i++ {
		rack = append(rack, ref{gvr: servers, name: fmt.Sprintf("e2e-encrypted-%d", i)})
	}
	deleteClaims(t, rack...)
}

// realServices is what the real services hold, by kind, each a sorted list
// of names: Keystone projects, Nova aggregates, Cinder volume types, Ceph
// pools and CephX clients of clouds, and the members of each OVN HA
// chassis group ("group chassis").
func realServices(ctx context.Context, t *testing.T) map[string][]string {
	t.Helper()
	l := listServices(ctx, t)
	real := map[string][]string{
		"projects":    slices.Collect(maps.Keys(l.projects)),
		"aggregates":  slices.Collect(maps.Keys(l.aggregates)),
		"volumetypes": l.volumeTypes,
		"cephpools":   l.cephPools,
		"cephclients": slices.DeleteFunc(slices.Clone(l.cephAuth), func(line string) bool { return !strings.HasPrefix(line, "client.openstack-") }),
	}
	for g, members := range l.haGroups {
		for _, m := range members {
			real["hagroups"] = append(real["hagroups"], g+" "+m)
		}
	}
	for k := range real {
		slices.Sort(real[k])
	}
	return real
}

// tenantImage is a tenant's RBD image tenant-volume-1 in the Ceph pool.
func tenantImage(t *testing.T, cloud, pool string) {
	t.Helper()
	t.Run(cloud+" holds an image tenant-volume-1 in "+pool, func(t *testing.T) {
		rbd(t, "create", "--size", "64", pool+"/tenant-volume-1")
	})
}

// rbd runs the rbd CLI against the local Ceph.
func rbd(t *testing.T, args ...string) []string {
	t.Helper()
	conf := filepath.Join(stateDir("COBALTCORE_CEPH_RUN", "/tmp/cobaltcore-ceph"), "ceph.conf")
	out, err := lines(t.Context(), 60*time.Second, "rbd", append([]string{"-c", conf}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// dropCephPool removes a Ceph pool, as the platform team does with a
// retained one it lets go.
func dropCephPool(t *testing.T, pool string) {
	t.Helper()
	if _, err := cephCLI(context.WithoutCancel(t.Context()), "osd", "pool", "rm", pool, pool, "--yes-i-really-really-mean-it"); err != nil {
		t.Logf("cannot remove the Ceph pool %s: %v", pool, err)
	}
}

// composedFor lists what is composed for a claim: its managed resources.
func composedFor(t *testing.T, claim string) func(context.Context) ([]string, error) {
	managed := managedResources(t)
	return func(ctx context.Context) ([]string, error) {
		var left []string
		for _, gvr := range managed {
			names, err := labelledFor(ctx, gvr, claim)
			if err != nil {
				return nil, err
			}
			for _, n := range names {
				left = append(left, gvr.Resource+"/"+n)
			}
		}
		return left, nil
	}
}

// compositeOf lists a claim's composite of gvr while it exists.
func compositeOf(gvr schema.GroupVersionResource, claim string) func(context.Context) ([]string, error) {
	return func(ctx context.Context) ([]string, error) { return labelledFor(ctx, gvr, claim) }
}

// labelledFor are the names of the objects of gvr Crossplane labelled for
// the claim (crossplane.io/claim-name): its composite, or what it composed.
func labelledFor(ctx context.Context, gvr schema.GroupVersionResource, claim string) ([]string, error) {
	l, err := plane.dyn.Resource(gvr).List(ctx, metav1.ListOptions{LabelSelector: "crossplane.io/claim-name=" + claim})
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(l.Items))
	for _, i := range l.Items {
		names = append(names, i.GetName())
	}
	return names, nil
}

// markedInUse holds once core labelled r in use (crossplane.io/in-use):
// a Usage protects it, and core's webhook refuses its deletion.
func markedInUse(r ref) func(context.Context) error {
	return func(ctx context.Context) error {
		o, err := plane.dyn.Resource(r.gvr).Namespace(r.namespace).Get(ctx, r.name, metav1.GetOptions{})
		if err == nil && o.GetLabels()["crossplane.io/in-use"] != "true" {
			err = fmt.Errorf("its label crossplane.io/in-use is %q", o.GetLabels()["crossplane.io/in-use"])
		}
		return err
	}
}

// existing lists those of the objects that exist.
func existing(objects ...ref) func(context.Context) ([]string, error) {
	return func(ctx context.Context) ([]string, error) {
		var left []string
		for _, r := range objects {
			_, err := plane.dyn.Resource(r.gvr).Namespace(r.namespace).Get(ctx, r.name, metav1.GetOptions{})
			switch {
			case err == nil:
				left = append(left, r.String())
			case !apierrors.IsNotFound(err):
				return nil, err
			}
		}
		return left, nil
	}
}

// TestDeletes: what deleting a claim takes with it and what it leaves, a
// pool in use that cannot go, and a cloud pinned to its Composition's
// revision (e2e.sh's sections 9, 9b and 9c, one after the other: 9b and 9c
// check the clouds 9 leaves). First it applies 9f's cloud, which
// provisions meanwhile.
func TestDeletes(t *testing.T) {
	stretchedCloud(t)
	t.Run("9 deleting a tenant's claim", tenantClaimDeleted)
	t.Run("9b a pool in use cannot be deleted", poolInUse)
	t.Run("9c a new Composition revision leaves a pinned production cloud where it is", pinnedRevision)
}

var (
	compositions         = schema.GroupVersionResource{Group: "apiextensions.crossplane.io", Version: "v1", Resource: "compositions"}
	compositionRevisions = schema.GroupVersionResource{Group: "apiextensions.crossplane.io", Version: "v1", Resource: "compositionrevisions"}
)

// stretchedCloud applies internal-stretched, 9f's cloud on the stretched
// st-pool-s: it provisions while 9 to 9e run.
func stretchedCloud(t *testing.T) {
	t.Helper()
	u := object(t, `apiVersion: c5c3.io/v1alpha1
kind: OpenStackCluster
metadata: {name: internal-stretched, namespace: internal}
spec: {compositionSelector: {matchLabels: {crossplane.c5c3.io/environment: production}}, region: eu-de-1, size: small, dataPolicy: Delete,
  hypervisorClusters: [hv-pool-b], storageClusters: [st-pool-s]}`)
	data, _ := u.MarshalJSON()
	if _, err := plane.dyn.Resource(openStackClusters).Namespace("internal").Patch(t.Context(), u.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: "e2e", Force: ptrTo(true)}); err != nil {
		t.Fatalf("internal-stretched: %v", err)
	}
}

// poolInUse (9b): each cloud protects what it consumes with a Crossplane
// ClusterUsage; core's admission webhook refuses to delete a used
// composite, so deleting a pool's claim is held (the claim says why) until
// the last cloud on it is gone, and every cloud stays Ready meanwhile.
func poolInUse(t *testing.T) {
	fin := poolComposite(t, "hv-pool-fin").Name
	finCloud := tenantCloud{namespace: "finance", name: "finance-prod"}
	finXR := finCloud.composite(t).Name
	eventuallyNil(t, 30*time.Second, "hv-pool-fin's composite is marked in use", markedInUse(ref{gvr: consumer("xhypervisorclusters"), name: fin}))
	t.Run("kubectl get clusterusages -l c5c3.io/used-pool=hv-pool-fin names the cloud", func(t *testing.T) {
		l, err := plane.dyn.Resource(usages).List(t.Context(), metav1.ListOptions{LabelSelector: "c5c3.io/used-pool=hv-pool-fin"})
		if err != nil {
			t.Fatal(err)
		}
		var details []string
		for _, u := range l.Items {
			details = append(details, u.GetAnnotations()["crossplane.io/usage-details"])
		}
		if !slices.ContainsFunc(details, func(d string) bool {
			return strings.Contains(d, "OpenStackCluster finance/finance-prod consumes hypervisor pool hv-pool-fin")
		}) {
			t.Errorf("the usages of hv-pool-fin say: %q", details)
		}
	})
	t.Run("deleting hv-pool-fin's composite is refused, naming the cloud", func(t *testing.T) {
		err := plane.dyn.Resource(consumer("xhypervisorclusters")).Delete(t.Context(), fin, metav1.DeleteOptions{})
		if err == nil || !strings.Contains(err.Error(), "in-use") || !strings.Contains(err.Error(), "XOpenStackCluster/"+finXR) {
			t.Fatalf("deleting the composite of hv-pool-fin, used by finance-prod: %v", err)
		}
		t.Logf("%.300s", err)
	})
	deleteClaims(t, ref{gvr: hypervisorClusters, namespace: "infrastructure", name: "hv-pool-fin"})
	eventually(t, 30*time.Second, "deleting the claim hv-pool-fin is held, and the claim names the cloud that uses it",
		ref{gvr: hypervisorClusters, namespace: "infrastructure", name: "hv-pool-fin"}, func(c *conditioned) (bool, string) {
			got := c.condition("Synced")
			return strings.Contains(got.Message, "in-use") && strings.Contains(got.Message, finXR), fmt.Sprintf("Synced %s: %q", got.Status, got.Message)
		})
	time.Sleep(5 * time.Second)
	t.Run("... its composite and Shoot are still there", func(t *testing.T) {
		if left, err := existing(ref{gvr: consumer("xhypervisorclusters"), name: fin}, ref{gvr: shoots, namespace: "garden-c5c3", name: "hv-pool-fin"})(t.Context()); err != nil || len(left) != 2 {
			t.Errorf("of hv-pool-fin's composite and Shoot, %v are there (%v)", left, err)
		}
	})
	for _, c := range []tenantCloud{finCloud, {namespace: "internal", name: "internal-prod"}, onHvPoolA[0], {namespace: "team-b", name: "team-b-staging"}} {
		eventually(t, 5*time.Second, c.String()+" is still Ready", c.claim(), isReady)
	}
	deleteClaims(t, finCloud.claim())
	eventuallyGone(t, 180*time.Second, "finance-prod, the pool's last cloud, is gone", ref{gvr: xOpenStackClusters, name: finXR})
	eventuallyGone(t, 120*time.Second, "then hv-pool-fin's held deletion proceeds: its claim is gone", ref{gvr: hypervisorClusters, namespace: "infrastructure", name: "hv-pool-fin"})
	eventuallyNone(t, 60*time.Second, "... and its composite and Shoot", existing(ref{gvr: consumer("xhypervisorclusters"), name: fin}, ref{gvr: shoots, namespace: "garden-c5c3", name: "hv-pool-fin"}))
}

// pinnedRevision (9c): team-a-prod's claim sets compositionUpdatePolicy:
// Manual (the examples' production clouds that a platform team moves by
// hand); internal-prod follows the newest revision. A new revision of the
// production Composition (another endpoint domain) reaches internal-prod,
// not team-a-prod, until team-a-prod's claim names it.
func pinnedRevision(t *testing.T) {
	ctx := t.Context()
	const comp = "production.xopenstackclusters.c5c3.io"
	prod, internal := onHvPoolA[0], tenantCloud{namespace: "internal", name: "internal-prod"}
	prodXR, intXR := prod.composite(t).Name, internal.composite(t).Name
	revisionOf := func(ctx context.Context, x string) (rev, keystone string, err error) {
		u, err := plane.dyn.Resource(xOpenStackClusters).Get(ctx, x, metav1.GetOptions{})
		if err != nil {
			return "", "", err
		}
		rev = nested(u.Object, "spec", "crossplane", "compositionRevisionRef", "name") + nested(u.Object, "spec", "compositionRevisionRef", "name")
		return rev, nested(u.Object, "status", "endpoints", "keystone"), nil
	}
	onDomain := func(x, domain string) func(context.Context) error {
		return func(ctx context.Context) error {
			_, k, err := revisionOf(ctx, x)
			if err == nil && !strings.HasSuffix(k, "."+domain) {
				err = fmt.Errorf("its Keystone endpoint is %q", k)
			}
			return err
		}
	}
	pinned, keystone, err := revisionOf(ctx, prodXR)
	t.Run("team-a-prod is pinned to a CompositionRevision, on cloud.cobaltcore.example", func(t *testing.T) {
		if err != nil || pinned == "" || !strings.HasSuffix(keystone, ".cloud.cobaltcore.example") {
			t.Fatalf("team-a-prod names revision %q, endpoint %q (%v)", pinned, keystone, err)
		}
		t.Log(pinned)
	})
	patch := []byte(`[{"op":"replace","path":"/spec/pipeline/0/input/endpointDomain","value":"v2.cobaltcore.example"}]`)
	if _, err := plane.dyn.Resource(compositions).Patch(ctx, comp, types.JSONPatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("the platform team changes the production Composition: %v", err)
	}
	var next string
	eventuallyNil(t, 60*time.Second, "the production Composition has a new revision", func(ctx context.Context) error {
		l, err := plane.dyn.Resource(compositionRevisions).List(ctx, metav1.ListOptions{LabelSelector: "crossplane.io/composition-name=" + comp})
		if err != nil {
			return err
		}
		var newest int64
		for _, r := range l.Items {
			if n, _, _ := unstructured.NestedInt64(r.Object, "spec", "revision"); n > newest {
				newest, next = n, r.GetName()
			}
		}
		if len(l.Items) < 2 {
			return fmt.Errorf("%d revisions", len(l.Items))
		}
		return nil
	})
	eventuallyNil(t, 120*time.Second, "internal-prod (Automatic) takes the new revision: its Keystone endpoint moves to v2.cobaltcore.example", onDomain(intXR, "v2.cobaltcore.example"))
	t.Run("team-a-prod (Manual) stays on its revision, its endpoint unchanged", func(t *testing.T) {
		rev, k, err := revisionOf(t.Context(), prodXR)
		if err != nil || rev != pinned || !strings.HasSuffix(k, ".cloud.cobaltcore.example") {
			t.Fatalf("team-a-prod is on %q, endpoint %q (%v)", rev, k, err)
		}
	})
	move := fmt.Appendf(nil, `{"spec":{"compositionRevisionRef":{"name":%q}}}`, next)
	if _, err := plane.dyn.Resource(openStackClusters).Namespace(prod.namespace).Patch(ctx, prod.name, types.MergePatchType, move, metav1.PatchOptions{}); err != nil {
		t.Fatalf("moving team-a-prod to %s: %v", next, err)
	}
	eventuallyNil(t, 120*time.Second, "moved by its claim to the new revision, team-a-prod follows", onDomain(prodXR, "v2.cobaltcore.example"))
	eventually(t, 120*time.Second, "team-a-prod is Ready on the new revision", prod.claim(), isReady)
}
