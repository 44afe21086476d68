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
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
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
// the platform team sets and a tenant may not. Then the docs' cloud goes
// as it came, by its tenant, and the docs' pools with their Shoots.
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
	if eventuallyNil(t, 30*time.Second, "team-a-staging's ControlPlane Object is marked in use", func(ctx context.Context) error {
		o, err := plane.dyn.Resource(cp.gvr).Get(ctx, cp.name, metav1.GetOptions{})
		if err == nil && o.GetLabels()["crossplane.io/in-use"] != "true" {
			err = fmt.Errorf("its label crossplane.io/in-use is %q", o.GetLabels()["crossplane.io/in-use"])
		}
		return err
	}) {
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
	eventuallyNone(t, 180*time.Second, "team-a-staging: its managed resources are gone", composedFor(t, "team-a-staging"))

	// The node it held of hv-pool-a is free: team-a-prod, waiting for 19
	// nodes there (6d) and first by name of the clouds waiting, grows onto it.
	prod := onHvPoolA[0].composite(t).Name
	if len(stagingNodes) != 1 {
		t.Errorf("team-a-staging held %v of hv-pool-a, not one node", stagingNodes)
	} else {
		n := stagingNodes[0]
		admin := openStackAdmin(t)
		pool := shootCluster(t, poolComposite(t, "hv-pool-a").Status.ShootName)
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
			node, err := pool.kube.CoreV1().Nodes().Get(ctx, n, metav1.GetOptions{})
			if err == nil && node.Labels["c5c3.io/cloud"] != prod {
				err = fmt.Errorf("node %s carries c5c3.io/cloud=%q", n, node.Labels["c5c3.io/cloud"])
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
			was := slices.DeleteFunc(slices.Clone(before[what]), func(s string) bool { return strings.Contains(s, gone) })
			if !slices.Equal(was, others) {
				t.Errorf("were %v, are %v", was, others)
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
	docs := tenantCloud{namespace: "tenant-finance", name: "finance-prod", docs: true}
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
	eventuallyGone(t, 240*time.Second, "the docs' finance-prod is deleted by its tenant", ref{gvr: docsGroup(xOpenStackClusters), name: docsXR})
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
			l, err := plane.dyn.Resource(gvr).List(ctx, metav1.ListOptions{LabelSelector: "crossplane.io/claim-name=" + claim})
			if err != nil {
				return nil, err
			}
			for _, i := range l.Items {
				left = append(left, gvr.Resource+"/"+i.GetName())
			}
		}
		return left, nil
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

// TestDeletes: what deleting a claim takes with it and what it leaves
// (e2e.sh's section 9).
func TestDeletes(t *testing.T) {
	t.Run("9 deleting a tenant's claim", tenantClaimDeleted)
}
