//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	consumerv1alpha1 "github.com/c5c3/consumer-plane/apis/consumer/v1alpha1"
)

// TestShares: a share edited in the claim moves the nodes; shared pools
// are shared out, never over-committed, and a claim on what is not the
// tenant's is refused, the tenant reading why on its claim (e2e.sh's
// sections 6d, 7 and 8). One after the other: 7 measures the shares 6d
// leaves, and 7 and 8 both claim st-pool-a's free capacity.
func TestShares(t *testing.T) {
	t.Run("6d a share shrunk or grown in the claim moves the hosts", sharesMove)
	t.Run("7 shared pools are shared out, not over-committed", sharedOut)
	t.Run("8 the dedicated pool, and a pool of another region", notTheTenants)
}

// sharedOut (7): the clouds on hv-pool-a hold shares that add up to at
// most its workers, each in its own aggregate; st-pool-a's shares of its
// raw capacity add up to at most it, and a cloud's Ceph quota is its
// share; a cloud asking for more nodes or storage than is free is refused
// and holds nothing.
func sharedOut(t *testing.T) {
	ctx := t.Context()
	hv, err := get[struct {
		Spec consumerv1alpha1.HypervisorClusterParameters `json:"spec"`
	}](ctx, ref{gvr: hypervisorClusters, namespace: "infrastructure", name: "hv-pool-a"})
	if err != nil {
		t.Fatalf("hv-pool-a: %v", err)
	}
	workers := hv.Spec.Workers
	// The composite's status and its aggregate in Nova follow one function
	// run, but Crossplane writes the status after it applies the Aggregate,
	// which the provider may carry to Nova first: 6d's last ask is read
	// once both say the same.
	admin := openStackAdmin(t)
	var total int32
	for _, c := range []tenantCloud{{namespace: "team-a", name: "team-a-prod"}, {namespace: "team-a", name: "team-a-staging"}, {namespace: "team-b", name: "team-b-staging"}} {
		var n int32
		eventuallyNil(t, 60*time.Second, fmt.Sprintf("%s's aggregate of hv-pool-a records the nodes its composite holds of the pool", c), func(ctx context.Context) error {
			x, err := c.compositeOf(ctx)
			if err != nil {
				return err
			}
			n = 0
			if x.Status.ConsumedPools != nil {
				for _, p := range x.Status.ConsumedPools.Hypervisor {
					if p.Name == "hv-pool-a" {
						n = p.AllocatedNodes
					}
				}
			}
			aggs, err := admin.aggregates(ctx, t)
			if err != nil {
				return fmt.Errorf("cannot list the Nova aggregates: %w", err)
			}
			if got := aggs[x.Name+"-hv-pool-a"].Metadata["c5c3.io_allocated_nodes"]; got != strconv.Itoa(int(n)) {
				return fmt.Errorf("aggregate %s-hv-pool-a records c5c3.io_allocated_nodes %q, the composite %d", x.Name, got, n)
			}
			t.Logf("%s holds %d nodes of hv-pool-a", c, n)
			return nil
		})
		total += n
	}
	t.Run(fmt.Sprintf("the shares of hv-pool-a add up to %d of its %d nodes", total, workers), func(t *testing.T) {
		if total > workers {
			t.Errorf("hv-pool-a is over-committed: %d of %d", total, workers)
		}
	})
	// (team-c, a new tenant namespace, got the tenant role at the start, as
	// the platform team would bind it.)
	big := cloudClaimOn(ctx, t, "team-c", "team-c-big", "staging", "hv-pool-a", int64(workers-total+1), "st-pool-a", nil)
	refusal(t, big, "over-committed", "a share larger than hv-pool-a has free")

	// A storage pool shares out its raw capacity the same way, among its
	// clouds' Ceph pool quotas (times their replication); each cloud's
	// Ceph quotas are what the pool gave it, and quotas larger than what is
	// free are refused.
	stPoolA := func(t *testing.T) *consumerv1alpha1.XStorageCluster {
		t.Helper()
		l, err := plane.dyn.Resource(consumer("xstorageclusters")).List(t.Context(), metav1.ListOptions{LabelSelector: "crossplane.io/claim-name=st-pool-a"})
		if err != nil || len(l.Items) != 1 {
			t.Fatalf("st-pool-a's composite: %v (%d)", err, len(l.Items))
		}
		x, err := decode[consumerv1alpha1.XStorageCluster](&l.Items[0])
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	st := stPoolA(t)
	t.Run("st-pool-a shares out at most its capacity", func(t *testing.T) {
		var sum int64
		var claims []string
		for _, s := range st.Status.Shares {
			sum += s.AllocatedGB
			claims = append(claims, s.Claim)
		}
		if st.Status.ShareableGB == 0 || sum != st.Status.AllocatedGB || st.Status.AllocatedGB > st.Status.ShareableGB {
			t.Errorf("st-pool-a: shares add up to %d, allocatedGB %d, shareableGB %d", sum, st.Status.AllocatedGB, st.Status.ShareableGB)
		}
		t.Logf("%d of its %d GB among %v", st.Status.AllocatedGB, st.Status.ShareableGB, claims)
	})
	// Refused by hv-pool-a, team-c-big holds nothing of st-pool-a, which had
	// room: its record there asks for nothing, so a claim that never becomes
	// Ready holds no shared capacity (its place in hv-pool-a's queue stays).
	if eventuallyNil(t, 60*time.Second, "team-c-big, refused by hv-pool-a, asks nothing of st-pool-a and holds none of it", func(ctx context.Context) error {
		l, err := plane.dyn.Resource(usages).List(ctx, metav1.ListOptions{LabelSelector: "c5c3.io/used-pool=st-pool-a"})
		if err != nil {
			return err
		}
		for _, u := range l.Items {
			if a := u.GetAnnotations(); a["c5c3.io/cloud"] == "team-c/team-c-big" && a["c5c3.io/asked-gb"] != "0" {
				return fmt.Errorf("its ClusterUsage %s asks %q GB", u.GetName(), a["c5c3.io/asked-gb"])
			}
		}
		for _, s := range stPoolA(t).Status.Shares {
			if s.Claim == "team-c/team-c-big" && s.AllocatedGB != 0 {
				return fmt.Errorf("st-pool-a gives it %d GB", s.AllocatedGB)
			}
		}
		return nil
	}) {
		eventually(t, 30*time.Second, "... and its claim says so", big, refusedSays("the cloud holds nothing of storage pool st-pool-a"))
	}
	st = stPoolA(t)
	prod := tenantCloud{namespace: "team-a", name: "team-a-prod"}.composite(t)
	t.Run("team-a-prod's Ceph pools' quotas are the share it was given: each quota times its replicas", func(t *testing.T) {
		var has int64
		if prod.Status.ConsumedPools != nil {
			for _, p := range prod.Status.ConsumedPools.Storage {
				if p.Name == "st-pool-a" {
					has = p.AllocatedGB
				}
			}
		}
		// Each pool's quota as the real Ceph holds it, and its replicas
		// (examples/tenants/team-a: volumes × 3, images × 3, ephemeral × 2).
		var raw int64
		for use, replicas := range map[string]int64{"volumes": 3, "images": 3, "ephemeral": 2} {
			out, err := cephCLI(t.Context(), "osd", "pool", "get-quota", prod.Name+"-st-pool-a-"+use, "-f", "json")
			var q struct {
				MaxBytes int64 `json:"quota_max_bytes"`
			}
			if err == nil {
				err = json.Unmarshal([]byte(strings.Join(out, "\n")), &q)
			}
			if err != nil || q.MaxBytes == 0 {
				t.Errorf("its %s pool's quota_max_bytes %d (%v), want a quota", use, q.MaxBytes, err)
			}
			raw += q.MaxBytes >> 30 * replicas
		}
		if has == 0 || raw != has {
			t.Errorf("allocatedGB %d, its pools' quotas times their replicas %d GB", has, raw)
		}
	})
	free := st.Status.ShareableGB - st.Status.AllocatedGB
	hoard := cloudClaimOn(ctx, t, "team-c", "team-c-hoard", "production", "hv-pool-b", 1, "st-pool-a",
		map[string]any{"ceph": map[string]any{"volumePool": map[string]any{"replication": int64(2), "quotaGB": free/2 + 1}}})
	refusal(t, hoard, "spec.storage.ceph: storage pool st-pool-a would be over-committed", "a volume quota larger than st-pool-a has free")
	t.Run("the tenant's identity cannot read composites (only its namespace's claims)", func(t *testing.T) {
		if _, err := asTenant(t, "team-c").Resource(xOpenStackClusters).List(t.Context(), metav1.ListOptions{}); !apierrors.IsForbidden(err) {
			t.Errorf("team-c lists the cluster-scoped composites: %v", err)
		}
	})
	t.Run("the tenant's identity cannot read another tenant's claims", func(t *testing.T) {
		if _, err := asTenant(t, "team-c").Resource(openStackClusters).Namespace("team-b").List(t.Context(), metav1.ListOptions{}); !apierrors.IsForbidden(err) {
			t.Errorf("team-c lists team-b's claims: %v", err)
		}
	})
	deleteClaims(t, big, hoard)
}

// notTheTenants (8): finance alone uses the dedicated hv-pool-fin; another
// tenant's claim on it, and a claim on a pool of another region, are
// refused and get nothing; a tenant is refused an environment its
// namespace does not allow, a compositionRef and a resourceRef, and a
// cloud beyond its namespace's quota, when it applies the claim.
func notTheTenants(t *testing.T) {
	ctx := t.Context()
	t.Run("only finance uses hv-pool-fin", func(t *testing.T) {
		l, err := plane.dyn.Resource(xOpenStackClusters).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var users []string
		for _, u := range l.Items {
			x, err := decode[consumerv1alpha1.XOpenStackCluster](&u)
			if err != nil {
				t.Fatal(err)
			}
			if x.Status.ConsumedPools != nil && slices.ContainsFunc(x.Status.ConsumedPools.Hypervisor, func(p consumerv1alpha1.ConsumedHypervisorPool) bool { return p.Name == "hv-pool-fin" }) {
				users = append(users, x.GetLabels()["crossplane.io/claim-namespace"])
			}
		}
		slices.Sort(users)
		if users = slices.Compact(users); !slices.Equal(users, []string{"finance"}) {
			t.Errorf("hv-pool-fin is used by %v", users)
		}
	})
	onFin := cloudClaimOn(ctx, t, "team-b", "team-b-on-fin", "staging", "hv-pool-fin", 2, "st-pool-a", nil)
	refusal(t, onFin, "spec.hypervisorClusters[0]: hypervisor pool hv-pool-fin is dedicated to other tenants; tenant team-b may not use it", "another tenant's dedicated pool")
	// (hv-pool-us went in 5; its storage pool is still there.)
	us := cloudClaimOn(ctx, t, "team-b", "team-b-us", "staging", "hv-pool-a", 2, "st-pool-us", nil)
	refusal(t, us, "spec.storageClusters[0]: storage pool st-pool-us is in region us-east-1, the cloud in eu-de-1", "a pool in another region")
	// A tenant does not choose its own limits: team-b's namespace allows
	// staging only (annotation c5c3.io/environments), and what Crossplane
	// and the platform team write is not the tenant's to write
	// (examples/crossplane/claim-composition-policy.yaml).
	prod := tenantCloud{namespace: "team-a", name: "team-a-prod"}.composite(t)
	written := "spec.compositionRef, spec.compositionRevisionRef, spec.compositionRevisionSelector and spec.resourceRef are written by Crossplane and the platform team"
	staging := map[string]any{"matchLabels": map[string]any{"crossplane.c5c3.io/environment": "staging"}}
	for _, c := range []struct {
		what string
		spec map[string]any
		want string
	}{
		{"production in its staging namespace", nil, "namespace team-b may claim clouds of environment staging, not production"},
		{"the production Composition by name", map[string]any{"compositionSelector": staging, "compositionRef": map[string]any{"name": "production.xopenstackclusters.c5c3.io"}}, written},
		{"another cloud's composite", map[string]any{"compositionSelector": staging, "resourceRef": map[string]any{"apiVersion": "c5c3.io/v1alpha1", "kind": "XOpenStackCluster", "name": prod.Name}}, written},
	} {
		t.Run("team-b's tenant is refused "+c.what, func(t *testing.T) {
			spec := map[string]any{"region": "eu-de-1", "size": "xlarge", "hypervisorClusters": []any{"hv-pool-a"}, "storageClusters": []any{"st-pool-a"}}
			for k, v := range c.spec {
				spec[k] = v
			}
			err := tenantApplies(t, "team-b", openStackClusters, "e2e-own-limits", spec)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want a refusal saying %q", err, c.want)
			}
		})
	}
	// A namespace's clouds are bounded across both groups the claim is
	// served in: team-b's ResourceQuota allows 3 in c5c3.io and none in the
	// deprecated crossplane.c5c3.io
	// (examples/infrastructure/tenants/team-b/namespace.yaml), and it holds 3.
	l, err := plane.dyn.Resource(openStackClusters).Namespace("team-b").List(t.Context(), metav1.ListOptions{})
	if err != nil || len(l.Items) != 3 {
		t.Fatalf("team-b holds %d clouds (%v), want 3", len(l.Items), err)
	}
	for _, gvr := range []schema.GroupVersionResource{openStackClusters, legacyGroup(openStackClusters)} {
		t.Run("team-b, holding 3 clouds, is refused a fourth in "+gvr.Group, func(t *testing.T) {
			err := tenantApplies(t, "team-b", gvr, "e2e-one-too-many", map[string]any{
				"compositionSelector": staging, "region": "eu-de-1", "size": "small",
				"hypervisorClusters": []any{"hv-pool-a"}, "storageClusters": []any{"st-pool-a"},
			})
			if err == nil || !strings.Contains(err.Error(), "exceeded quota: cobaltcore-clouds") {
				t.Errorf("got %v, want exceeded quota: cobaltcore-clouds", err)
			}
		})
	}
	deleteClaims(t, onFin, us)
}

// cloudClaimOn applies, as the platform would for the tenant, a small cloud
// of environment env on hypervisor pool hv (nodes of it) and storage pool st.
func cloudClaimOn(ctx context.Context, t *testing.T, namespace, name, env, hv string, nodes int64, st string, storage map[string]any) ref {
	t.Helper()
	spec := map[string]any{
		"compositionSelector": map[string]any{"matchLabels": map[string]any{"crossplane.c5c3.io/environment": env}},
		"region":              "eu-de-1", "size": "small",
		"hypervisorClusters": []any{hv}, "hypervisorShares": []any{map[string]any{"name": hv, "nodes": nodes}},
		"storageClusters": []any{st},
	}
	if storage != nil {
		spec["storage"] = storage
	}
	r := ref{gvr: openStackClusters, namespace: namespace, name: name}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": r.gvr.GroupVersion().String(), "kind": "OpenStackCluster",
		"metadata": map[string]any{"name": name, "namespace": namespace}, "spec": spec,
	}}
	data, _ := u.MarshalJSON()
	if _, err := plane.dyn.Resource(r.gvr).Namespace(namespace).Patch(ctx, name, types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: "e2e", Force: ptrTo(true)}); err != nil {
		t.Fatalf("OpenStackCluster %s/%s: %v", namespace, name, err)
	}
	return r
}

// tenantApplies is the tenant's server-side dry run of a cloud claim: the
// error the API server answers with, if any.
func tenantApplies(t *testing.T, tenant string, gvr schema.GroupVersionResource, name string, spec map[string]any) error {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": gvr.Group + "/" + gvr.Version, "kind": "OpenStackCluster",
		"metadata": map[string]any{"name": name, "namespace": tenant}, "spec": spec,
	}}
	_, err := asTenant(t, tenant).Resource(gvr).Namespace(tenant).Create(t.Context(), u, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	return err
}

// refusedSays holds when the claim is Refused and its PoolsReady condition
// says text.
func refusedSays(text string) func(*cloudClaim) (bool, string) {
	return func(c *cloudClaim) (bool, string) {
		got := c.Status.GetCondition("PoolsReady")
		return c.Status.Phase == "Refused" && got.Reason == "Refused" && strings.Contains(got.Message, text),
			fmt.Sprintf("PHASE %s, PoolsReady %s: %q", c.Status.Phase, got.Reason, got.Message)
	}
}

// refusal: the claim r is refused saying text, as its tenant reads it on
// the claim and in a Warning event, and nothing was composed for it.
func refusal(t *testing.T, r ref, text, rule string) {
	t.Helper()
	if !eventuallyNil(t, 60*time.Second, rule+": "+r.namespace+"/"+r.name+" is refused, and the tenant reads why on the claim (PHASE Refused, PoolsReady)", func(ctx context.Context) error {
		// Read as the tenant: its identity, its namespace only.
		u, err := asTenant(t, r.namespace).Resource(r.gvr).Namespace(r.namespace).Get(ctx, r.name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		c, err := decode[cloudClaim](u)
		if err != nil {
			return err
		}
		if ok, seen := refusedSays(text)(c); !ok {
			return errors.New(seen)
		}
		t.Logf("message: %.300s", c.Status.GetCondition("PoolsReady").Message)
		return nil
	}) {
		return
	}
	eventuallyNil(t, 30*time.Second, "... and in a Warning event on the claim, read as the tenant", func(ctx context.Context) error {
		l, err := asTenantKube(t, r.namespace).CoreV1().Events(r.namespace).List(ctx, metav1.ListOptions{FieldSelector: fields.Set{
			"involvedObject.kind": "OpenStackCluster", "involvedObject.name": r.name, "reason": "Refused",
		}.String()})
		if err != nil {
			return err
		}
		for _, e := range l.Items {
			if e.Type == "Warning" && strings.Contains(e.Message, text) {
				return nil
			}
		}
		return fmt.Errorf("%d Refused events, none a Warning saying %q", len(l.Items), text)
	})
	t.Run("... and nothing was composed for it", func(t *testing.T) {
		composed, err := composedFor(t, r.name)(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range composed {
			t.Errorf("composed for %s: %s", r.name, c)
		}
	})
}

// deleteClaims deletes the claims without waiting for them to go.
func deleteClaims(t *testing.T, claims ...ref) {
	t.Helper()
	for _, r := range claims {
		if err := plane.dyn.Resource(r.gvr).Namespace(r.namespace).Delete(context.WithoutCancel(t.Context()), r.name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("cannot delete %s: %v", r, err)
		}
	}
}
