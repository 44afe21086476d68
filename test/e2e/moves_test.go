//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/services"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	consumerv1alpha1 "github.com/c5c3/consumer-plane/apis/consumer/v1alpha1"
)

// onHvPoolA are the clouds sharing hv-pool-a's 3 nodes.
var onHvPoolA = []tenantCloud{
	{namespace: "team-a", name: "team-a-prod"},
	{namespace: "team-a", name: "team-a-staging"},
	{namespace: "team-b", name: "team-b-staging"},
}

// sharesMove (6d): hv-pool-a's 3 nodes are held by three clouds that ask
// for more (20, 4 and 4 nodes), whichever came first holding most. Each
// tenant sets its share to 1: each cloud then holds exactly one node of its
// own, and its aggregate (its zone hv-pool-a) exactly that node, a compute
// host of the local Nova. Then team-a-prod asks for 20 again: no node is
// free, none is taken from another cloud, and the pool says what the share
// waits for.
func sharesMove(t *testing.T) {
	ctx := t.Context()
	pool := poolComposite(t, "hv-pool-a")
	composites := map[tenantCloud]string{}
	before := map[tenantCloud][]string{}
	for _, c := range onHvPoolA {
		composites[c] = c.composite(t).Name
		before[c] = shareOf(pool, composites[c]).Nodes
	}
	for _, c := range onHvPoolA {
		setShare(ctx, t, c, "hv-pool-a", 1)
	}
	admin := openStackAdmin(t)
	// oneEach: every cloud holds one node, no two the same, its aggregate
	// that node, a compute host of the local Nova.
	oneEach := func(ctx context.Context) error {
		p, err := poolCompositeOf(ctx, "hv-pool-a")
		if err != nil {
			return err
		}
		aggs, err := admin.aggregates(ctx, t)
		if err != nil {
			return err
		}
		hosts, err := computeHosts(ctx, admin, t)
		if err != nil {
			return err
		}
		held := map[string]string{}
		for _, c := range onHvPoolA {
			x := composites[c]
			nodes := shareOf(p, x).Nodes
			if len(nodes) != 1 {
				return fmt.Errorf("%s holds %v", c, nodes)
			}
			n := nodes[0]
			if other, ok := held[n]; ok {
				return fmt.Errorf("%s and %s both hold %s", other, c, n)
			}
			held[n] = c.String()
			if got := sortedHosts(aggs[x+"-hv-pool-a"]); !slices.Equal(got, nodes) {
				return fmt.Errorf("%s holds %s, its aggregate %s-hv-pool-a %v", c, n, x, got)
			}
			if !slices.Contains(hosts, n) {
				return fmt.Errorf("%s's node %s is not a compute host of Nova (%v)", c, n, hosts)
			}
		}
		return nil
	}
	t0 := time.Now()
	if eventuallyNil(t, 240*time.Second, "every cloud of hv-pool-a holds exactly one node of its own, its aggregate that node, a compute host", oneEach) {
		took := time.Since(t0)
		p := poolComposite(t, "hv-pool-a")
		for _, c := range onHvPoolA {
			now := shareOf(p, composites[c]).Nodes
			t.Run(fmt.Sprintf("... %s: held %v, now %v (%.0f s after the edits)", c, before[c], now, took.Seconds()), func(t *testing.T) {
				if len(now) != 1 {
					t.Errorf("holds %v", now)
				}
			})
		}
	}
	prod := onHvPoolA[0]
	setShare(ctx, t, prod, "hv-pool-a", 20)
	eventually(t, 120*time.Second, "team-a-prod asks for 20 nodes of hv-pool-a again: the pool says 19 are not free yet",
		ref{gvr: hypervisorClusters, namespace: "infrastructure", name: "hv-pool-a"},
		conditionIs("NodesBound", "", "team-a/team-a-prod: 19 node(s) of its share are not free yet"))
	t.Run("... and no node moved: every cloud keeps its one", func(t *testing.T) {
		if err := oneEach(t.Context()); err != nil {
			t.Errorf("nodes moved when team-a-prod grew without free nodes: %v", err)
		}
	})
	for _, c := range onHvPoolA[1:] {
		setShare(ctx, t, c, "hv-pool-a", 0)
	}
}

// poolComposite is the XHypervisorCluster of the pool claimed as claim.
func poolComposite(t *testing.T, claim string) *consumerv1alpha1.XHypervisorCluster {
	t.Helper()
	p, err := poolCompositeOf(t.Context(), claim)
	if err != nil {
		t.Fatalf("hypervisor pool %s: %v", claim, err)
	}
	return p
}

func poolCompositeOf(ctx context.Context, claim string) (*consumerv1alpha1.XHypervisorCluster, error) {
	c, err := get[struct {
		Spec struct {
			ResourceRef *struct {
				Name string `json:"name"`
			} `json:"resourceRef"`
		} `json:"spec"`
	}](ctx, ref{gvr: hypervisorClusters, namespace: "infrastructure", name: claim})
	if err != nil {
		return nil, err
	}
	if c.Spec.ResourceRef == nil {
		return nil, fmt.Errorf("the claim names no composite")
	}
	return get[consumerv1alpha1.XHypervisorCluster](ctx, ref{gvr: consumer("xhypervisorclusters"), name: c.Spec.ResourceRef.Name})
}

// shareOf is cloud's share of the pool p (empty when it has none).
func shareOf(p *consumerv1alpha1.XHypervisorCluster, cloud string) consumerv1alpha1.PoolShare {
	for _, s := range p.Status.Shares {
		if s.Cloud == cloud {
			return s
		}
	}
	return consumerv1alpha1.PoolShare{}
}

// setShare is the tenant's edit of its claim's share of pool: nodes, or no
// entry (the default share) when 0.
func setShare(ctx context.Context, t *testing.T, c tenantCloud, pool string, nodes int32) {
	t.Helper()
	u, err := plane.dyn.Resource(openStackClusters).Namespace(c.namespace).Get(ctx, c.name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("%s: %v", c, err)
	}
	shares, _, _ := unstructured.NestedSlice(u.Object, "spec", "hypervisorShares")
	shares = slices.DeleteFunc(shares, func(s any) bool { m, _ := s.(map[string]any); return m["name"] == pool })
	if nodes > 0 {
		shares = append(shares, map[string]any{"name": pool, "nodes": int64(nodes)})
	}
	patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"hypervisorShares": shares}})
	if _, err := asTenant(t, c.namespace).Resource(openStackClusters).Namespace(c.namespace).Patch(ctx, c.name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("%s's tenant sets its share of %s to %d: %v", c, pool, nodes, err)
	}
}

// computeHosts are the hosts of the local Nova's nova-compute services.
func computeHosts(ctx context.Context, o *openStack, t *testing.T) ([]string, error) {
	pages, err := services.List(o.compute(t), services.ListOpts{Binary: "nova-compute"}).AllPages(ctx)
	if err != nil {
		return nil, err
	}
	all, err := services.ExtractServices(pages)
	if err != nil {
		return nil, err
	}
	hosts := make([]string, 0, len(all))
	for _, s := range all {
		hosts = append(hosts, s.Host)
	}
	slices.Sort(hosts)
	return hosts, nil
}
