//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/c5c3/consumer-plane/internal/pool"
)

// TestHolds: what a tenant's data or instances still use stays the cloud's
// when its claim lets go of a pool, and a stretched pool holds its data in
// both zones (e2e.sh's sections 9d, 9e and 9f). The three edit different
// clouds and pools (internal-prod and st-pool-b, team-a-prod and
// hv-pool-a, internal-stretched and st-pool-s), so they run at once; beside
// them 9g freezes the cluster of st-pool-us, which none of them uses (#54).
func TestHolds(t *testing.T) {
	t.Run("9d a tenant's data holds its storage pool in the cloud", dataHoldsStoragePool)
	t.Run("9e a hypervisor pool whose node runs the cloud's instance stays the cloud's", instanceHoldsHypervisorPool)
	t.Run("9f a stretched storage pool keeps two replicas in each zone, in Ceph's stretch mode", stretchedPool)
	t.Run("9g a storage pool's cluster API frozen: its agent's report is named the last, until it answers again", func(t *testing.T) {
		t.Parallel()
		storagePoolClusterUnreachable(t, "st-pool-us")
	})
}

// dataHoldsStoragePool (9d): internal-prod's tenant writes an image into
// its volume pool of st-pool-b, then removes st-pool-b from its claim:
// st-pool-b stays the cloud's (its Ceph pools, client and volume type), the
// claim says which Ceph pool holds what, and the cloud stays Ready. Once
// the image is gone, st-pool-b leaves the cloud and its Ceph pools go; put
// back, they are composed again.
func dataHoldsStoragePool(t *testing.T) {
	t.Parallel()
	c := tenantCloud{namespace: "internal", name: "internal-prod"}
	x := c.composite(t).Name
	vol := x + "-st-pool-b-volumes"
	tenantImage(t, c.name, vol)
	eventuallyNil(t, 90*time.Second, "the Pool resource "+vol+" reports the image (status.atProvider.images)", func(ctx context.Context) error {
		p, err := plane.dyn.Resource(cephPools).Get(ctx, vol, metav1.GetOptions{})
		if err == nil {
			if n, _, _ := unstructured.NestedInt64(p.Object, "status", "atProvider", "images"); n != 1 {
				err = fmt.Errorf("status.atProvider.images is %d", n)
			}
		}
		return err
	})
	// In the same edit the tenant switches its object store off: under
	// dataPolicy Retain it stays, with the tenant's objects (#52 §6).
	tenantPatches(t, c, map[string]any{"storageClusters": []any{"st-pool-a"}, "storage": map[string]any{"ceph": map[string]any{"objectStore": map[string]any{"enabled": false}}}})
	eventually(t, 60*time.Second, "st-pool-b removed from the claim: the tenant reads on its claim that st-pool-b stays, "+vol+" holding the image",
		c.claim(), conditionIs("PoolsReady", "", "storage pool st-pool-b, removed from spec.storageClusters, stays the cloud's: Ceph pool "+vol+" holds 1 RBD image(s)"))
	rgw := x + "-rgw" // a cloud's Rook objects are named after its composite
	eventually(t, 60*time.Second, "its object store switched off in the same edit: the tenant reads on its claim that CephObjectStore "+rgw+" stays, holding its objects (dataPolicy Retain)",
		c.claim(), conditionIs("StorageReady", "", "CephObjectStore "+rgw+" in st-pool-a stays though spec.storage.ceph.objectStore is off: it holds the tenant's objects (spec.dataPolicy Retain)"))
	t.Run("... and CephObjectStore "+rgw+" is still in st-pool-a's cluster, preserving its pools, within their quotas", func(t *testing.T) {
		o, err := shootCluster(t, "st-pool-a").dyn.Resource(cephObjectStores).Namespace("rook-ceph").Get(t.Context(), rgw, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the CephObjectStore went: %v", err)
		}
		if keep, _, _ := unstructured.NestedBool(o.Object, "spec", "preservePoolsOnDelete"); !keep {
			t.Errorf("its spec.preservePoolsOnDelete is false: Rook would delete the tenant's objects with it")
		}
		// internal-prod's objectStore.quotaGB 5000, its metadata pools a
		// tenth (examples/tenants/internal), admitted by Rook's own CRD
		// (#52 §7).
		for pool, want := range map[string]string{"dataPool": "5000Gi", "metadataPool": "500Gi"} {
			if got, _, _ := unstructured.NestedString(o.Object, "spec", pool, "quotas", "maxSize"); got != want {
				t.Errorf("its spec.%s.quotas.maxSize is %q, want %q", pool, got, want)
			}
		}
	})
	t.Run("... and status.consumedPools lists st-pool-b as held", func(t *testing.T) {
		cl := tenantReads(t, c)
		var removing string
		if cl.Status.ConsumedPools != nil {
			for _, p := range cl.Status.ConsumedPools.Storage {
				if p.Name == "st-pool-b" {
					removing = p.Removing
				}
			}
		}
		if removing == "" {
			t.Fatal("status.consumedPools does not list st-pool-b as held")
		}
		t.Log(removing)
	})
	time.Sleep(5 * time.Second)
	t.Run("... its Ceph pools are still the cloud's, with the tenant's image", func(t *testing.T) {
		for _, p := range []string{vol, x + "-st-pool-b-images"} {
			if _, err := plane.dyn.Resource(cephPools).Get(t.Context(), p, metav1.GetOptions{}); err != nil {
				t.Errorf("the Pool %s: %v", p, err)
			}
		}
		if !slices.Contains(rbd(t, "ls", vol), "tenant-volume-1") {
			t.Errorf("the image went from %s while it holds data", vol)
		}
	})
	eventually(t, 5*time.Second, "internal-prod stays Ready meanwhile", c.claim(), isReady)
	rbd(t, "rm", vol+"/tenant-volume-1")
	eventuallyGone(t, 180*time.Second, "the image deleted, st-pool-b leaves the cloud: its Pool resource "+vol+" goes", ref{gvr: cephPools, name: vol})
	eventuallyNil(t, 60*time.Second, "... and the empty Ceph pool "+vol+" with it", func(ctx context.Context) error {
		pools, err := cephCLI(ctx, "osd", "pool", "ls")
		if err == nil && slices.Contains(pools, vol) {
			err = fmt.Errorf("%s is still in Ceph", vol)
		}
		return err
	})
	tenantPatches(t, c, map[string]any{"storageClusters": []any{"st-pool-a", "st-pool-b"}, "storage": map[string]any{"ceph": map[string]any{"objectStore": map[string]any{"enabled": true}}}})
	eventually(t, 300*time.Second, "st-pool-b back in the claim: its Pool resource "+vol+" is Ready again", ref{gvr: cephPools, name: vol}, isReady)
	eventually(t, 300*time.Second, "internal-prod is Ready again", c.claim(), isReady)
}

// instanceHoldsHypervisorPool (9e): team-a-prod holds 2 nodes of hv-pool-a
// (6d, 9). Its tenant starts an instance on one (a domain in the node's
// libvirt test driver, which the node's agent reads when it starts again);
// that node goes out of service and back (nodeLostWithInstance); then the
// tenant removes hv-pool-a from its claim: the pool stays the cloud's while
// the instance runs — the empty node goes back at once, the aggregate
// keeps the other, and the tenant reads why. Once the instance is gone, the
// pool leaves the cloud. Put back, the cloud has hv-pool-a again.
func instanceHoldsHypervisorPool(t *testing.T) {
	t.Parallel()
	c := onHvPoolA[0]
	x := c.composite(t).Name
	held := slices.Sorted(slices.Values(shareOf(poolComposite(t, "hv-pool-a"), x).Nodes))
	if len(held) != 2 {
		t.Fatalf("team-a-prod holds %v of hv-pool-a, not 2 nodes", held)
	}
	node, other := held[0], held[1]
	u, err := plane.dyn.Resource(openStackClusters).Namespace(c.namespace).Get(t.Context(), c.name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pools, _, _ := unstructured.NestedSlice(u.Object, "spec", "hypervisorClusters")
	shares, _, _ := unstructured.NestedSlice(u.Object, "spec", "hypervisorShares")
	cluster := shootCluster(t, "hv-pool-a")
	admin := openStackAdmin(t)
	runs := func(n int64) func(context.Context) error {
		return func(ctx context.Context) error {
			h, err := cluster.dyn.Resource(hypervisors).Get(ctx, node, metav1.GetOptions{})
			if err == nil {
				if got, _, _ := unstructured.NestedInt64(h.Object, "status", "numInstances"); got != n {
					err = fmt.Errorf("its status.numInstances is %d", got)
				}
			}
			return err
		}
	}
	instance(t, node, true)
	if !eventuallyNil(t, 90*time.Second, "team-a-prod's tenant starts an instance on "+node+": its agent reports it", runs(1)) {
		return
	}
	nodeLostWithInstance(t, c, x, node)
	tenantPatches(t, c, map[string]any{
		"hypervisorClusters": slices.DeleteFunc(slices.Clone(pools), func(p any) bool { return p == "hv-pool-a" }),
		"hypervisorShares":   slices.DeleteFunc(slices.Clone(shares), func(s any) bool { m, _ := s.(map[string]any); return m["name"] == "hv-pool-a" }),
	})
	eventually(t, 90*time.Second, "hv-pool-a removed from team-a-prod: the tenant reads that it stays while "+node+" runs its instance", c.claim(),
		conditionIs("PoolsReady", "", "hypervisor pool hv-pool-a, removed from spec.hypervisorClusters, stays the cloud's: its nodes "+node+" still run the cloud's 1 instance(s)"))
	eventuallyNil(t, 90*time.Second, "... its aggregate "+x+"-hv-pool-a keeps "+node+", and the empty "+other+" went back to the pool", func(ctx context.Context) error {
		aggs, err := admin.aggregates(ctx, t)
		if got := sortedHosts(aggs[x+"-hv-pool-a"]); err == nil && !slices.Equal(got, []string{node}) {
			err = fmt.Errorf("it holds %v", got)
		}
		return err
	})
	eventually(t, 5*time.Second, "team-a-prod stays Ready meanwhile", c.claim(), isReady)
	instance(t, node, false)
	eventuallyNil(t, 180*time.Second, "the instance stopped: hv-pool-a leaves team-a-prod (no share, no aggregate, "+node+" no longer its)", func(ctx context.Context) error {
		cl, err := get[cloudClaim](ctx, c.claim())
		if err != nil {
			return err
		}
		if msg := cl.Status.GetCondition("PoolsReady").Message; strings.Contains(msg, "hypervisor pool hv-pool-a, removed from spec.hypervisorClusters, stays") {
			return fmt.Errorf("the claim says: %s", msg)
		}
		aggs, err := admin.aggregates(ctx, t)
		if err != nil {
			return err
		}
		if a, ok := aggs[x+"-hv-pool-a"]; ok {
			return fmt.Errorf("its aggregate holds %v", a.Hosts)
		}
		n, err := cluster.kube.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if n.Labels[pool.LabelCloud] == x {
			return fmt.Errorf("%s still carries "+pool.LabelCloud+"=%s", node, x)
		}
		p, err := poolCompositeOf(ctx, "hv-pool-a")
		if err == nil && shareOf(p, x).Cloud != "" {
			err = fmt.Errorf("hv-pool-a still gives it a share: %+v", shareOf(p, x))
		}
		return err
	})
	tenantPatches(t, c, map[string]any{"hypervisorClusters": pools, "hypervisorShares": shares})
	eventuallyNil(t, 180*time.Second, "hv-pool-a back in team-a-prod's claim: its aggregate is there again and the cloud is Ready", func(ctx context.Context) error {
		aggs, err := admin.aggregates(ctx, t)
		if err != nil {
			return err
		}
		if _, ok := aggs[x+"-hv-pool-a"]; !ok {
			return fmt.Errorf("no aggregate %s-hv-pool-a", x)
		}
		cl, err := get[conditioned](ctx, c.claim())
		if err != nil {
			return err
		}
		if ok, seen := isReady(cl); !ok {
			return fmt.Errorf("%s", seen)
		}
		return nil
	})
}

// nodeLostWithInstance (9e, #54): the node running the cloud's instance goes
// out of service (maintenance, as an operator or a failure puts it): it
// stays the cloud's, out of service, with its aggregate; the tenant reads it
// in ComputeAvailable, and the cloud stays Ready. Back in service, the
// claim says every node serves again.
func nodeLostWithInstance(t *testing.T, c tenantCloud, x, node string) {
	t.Helper()
	backInService := inMaintenance(t, "hv-pool-a", node, "e2e: lost with an instance")
	eventually(t, 90*time.Second, node+", running the instance, goes out of service: the tenant reads it in ComputeAvailable", c.claim(),
		conditionIs("ComputeAvailable", "OutOfService", "node(s) "+node+" of this cloud are out of service with its instances on them"))
	admin := openStackAdmin(t)
	eventuallyNil(t, 60*time.Second, "... hv-pool-a keeps it team-a-prod's (status.shares[].outOfService), and its aggregate keeps it", func(ctx context.Context) error {
		p, err := poolCompositeOf(ctx, "hv-pool-a")
		if err != nil {
			return err
		}
		if s := shareOf(p, x); !slices.Contains(s.OutOfService, node) || !slices.Contains(s.Draining, node) {
			return fmt.Errorf("its share: nodes %v, draining %v, out of service %v", s.Nodes, s.Draining, s.OutOfService)
		}
		aggs, err := admin.aggregates(ctx, t)
		if hosts := sortedHosts(aggs[x+"-hv-pool-a"]); err == nil && !slices.Contains(hosts, node) {
			err = fmt.Errorf("its aggregate holds %v", hosts)
		}
		return err
	})
	eventually(t, 5*time.Second, "team-a-prod stays Ready meanwhile", c.claim(), isReady)
	backInService()
	eventually(t, 90*time.Second, node+" back in service: ComputeAvailable says every node serves", c.claim(), conditionIs("ComputeAvailable", "Available", "every node the cloud holds is in service"))
}

// tenantPatches is the tenant's merge patch of its claim's spec.
func tenantPatches(t *testing.T, c tenantCloud, spec map[string]any) {
	t.Helper()
	patch, _ := json.Marshal(map[string]any{"spec": spec})
	if _, err := asTenant(t, c.namespace).Resource(c.claim().gvr).Namespace(c.namespace).Patch(t.Context(), c.name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("%s's tenant patches its claim with %s: %v", c, patch, err)
	}
}

var domain = regexp.MustCompile(`(?m)^.*<domain .*\n`)

// instance starts (on) or stops a tenant's instance on a node of a pool:
// a domain in the node's libvirt test driver, read by the node's hypervisor
// agent (operator-standin), which is killed to start again and read it.
func instance(t *testing.T, node string, on bool) {
	t.Helper()
	// The agent's container of node garden-c5c3.POOL-node-N:
	// garden-c5c3.POOL_hypervisor-agent_node-N.
	i := strings.LastIndex(node, "-node-")
	agent := node[:i] + "_hypervisor-agent_node-" + node[i+len("-node-"):]
	f := plane.path("agents/" + agent + "/libvirt.xml")
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	xml := domain.ReplaceAllString(string(b), "")
	if on {
		xml = strings.Replace(xml, "</node>", "  <domain type='test'><name>e2e-tenant-vm</name><memory>1048576</memory><vcpu>1</vcpu><os><type>hvm</type></os></domain>\n</node>", 1)
	}
	if err := os.WriteFile(f, []byte(xml), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("ctr", "--address", plane.path("node/containerd.sock"), "-n", "shoot-nodes", "tasks", "kill", "-s", "SIGKILL", agent).CombinedOutput(); err != nil {
		t.Logf("ctr tasks kill %s: %v: %s", agent, err, out)
	}
}
