package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/testing/protocmp"
	apiresource "k8s.io/apimachinery/pkg/api/resource"

	"github.com/c5c3/consumer-plane/apis/consumer/v1alpha1"
	input "github.com/c5c3/consumer-plane/apis/input/v1alpha1"
	"github.com/c5c3/consumer-plane/internal/function"
	"github.com/c5c3/consumer-plane/internal/function/fntest"
	"github.com/c5c3/consumer-plane/internal/pool"
)

// The landscape of the tests: eu-de-1 with two shared hypervisor pools, a
// dedicated one for finance, two storage pools and the control-plane
// cluster; us-east-1 with one pool of each.

func hvPool(name, region string, workers int, phase string, mutate ...func(spec map[string]any)) string {
	spec := map[string]any{"region": region, "name": name, "workers": workers, "maxWorkers": workers + 10, "zones": []any{region + "a"},
		"ironcore": map[string]any{"machinePool": name, "machineClass": "baremetal-kvm"}, "dedicated": false}
	for _, m := range mutate {
		m(spec)
	}
	return compositeJSON("XHypervisorCluster", name+"-x1", "infrastructure", name, "2026-11-01T00:00:00Z", spec,
		map[string]any{"phase": phase, "nodeCount": workers})
}

func stPool(name, region, phase string, mutate ...func(spec map[string]any)) string {
	spec := map[string]any{"region": region, "name": name, "workers": 6, "maxWorkers": 10, "zones": []any{region + "a"},
		"ironcore": map[string]any{"machinePool": name, "machineClass": "baremetal-storage"}, "dedicated": false}
	for _, m := range mutate {
		m(spec)
	}
	return compositeJSON("XStorageCluster", name+"-x1", "infrastructure", name, "2026-11-01T00:00:00Z", spec,
		map[string]any{"phase": phase, "health": "HEALTH_OK", "capacity": map[string]any{"total": "100Ti", "available": "80Ti", "used": "20Ti"}})
}

func cpCluster(name, region, phase string) string {
	return compositeJSON("XControlPlaneCluster", name+"-x1", "infrastructure", name, "2026-11-01T00:00:00Z",
		map[string]any{"region": region, "workers": 3, "maxWorkers": 5, "zones": []any{"a", "b", "c"}, "highAvailability": true},
		map[string]any{"phase": phase})
}

func dedicatedTo(tenants ...any) func(map[string]any) {
	return func(spec map[string]any) { spec["dedicated"], spec["allowedTenants"] = true, tenants }
}

// cloudXR is a claimed XOpenStackCluster; holds are the allocations its
// status records (pool -> nodes).
func cloudXR(name, tenant, created string, spec map[string]any, phase string, holds map[string]int) string {
	hv := []any{}
	for _, pool := range slices.Sorted(maps.Keys(holds)) {
		hv = append(hv, map[string]any{"name": pool, "allocatedNodes": holds[pool]})
	}
	status := map[string]any{"consumedPools": map[string]any{"hypervisor": hv}}
	if phase != "" {
		status["phase"] = phase
	}
	return compositeJSON("XOpenStackCluster", name, tenant, name, created, spec, status)
}

func compositeJSON(kind, name, claimNamespace, claimName, created string, spec, status map[string]any) string {
	b, err := json.Marshal(map[string]any{
		"apiVersion": "crossplane.c5c3.io/v1alpha1", "kind": kind,
		"metadata": map[string]any{"name": name, "creationTimestamp": created,
			"labels": map[string]any{function.LabelClaimName: claimName, function.LabelClaimNamespace: claimNamespace}},
		"spec": spec, "status": status,
	})
	if err != nil {
		panic(err)
	}
	return string(b)
}

// setPools sets a cloud's hypervisor pools: each entry is a pool's name, or
// a share ({name, nodes}) that names the pool and reserves its nodes.
func setPools(s map[string]any, entries ...any) {
	names, shares := []any{}, []any{}
	for _, e := range entries {
		switch e := e.(type) {
		case string:
			names = append(names, e)
		case map[string]any:
			names = append(names, e["name"])
			if _, ok := e["nodes"]; ok {
				shares = append(shares, e)
			}
		}
	}
	s["hypervisorClusters"] = names
	delete(s, "hypervisorShares")
	if len(shares) > 0 {
		s["hypervisorShares"] = shares
	}
}

// spec is a cloud's spec as the API server would default it.
func spec(mutate ...func(map[string]any)) map[string]any {
	s := map[string]any{
		"region": "eu-de-1", "size": "large", "openStackRelease": "2025.2",
		"hypervisorClusters": []any{"hv-pool-a"},
		"hypervisorShares":   []any{map[string]any{"name": "hv-pool-a", "nodes": 20}},
		"storageClusters":    []any{"st-pool-a"},
		"services":           map[string]any{"nova": true, "neutron": true, "cinder": true, "glance": true, "horizon": true, "octavia": false, "manila": false, "barbican": false},
		"cortex":             map[string]any{"enabled": false},
		"tls":                map[string]any{"enabled": false},
		"storage": map[string]any{"ceph": map[string]any{
			"volumePool":    map[string]any{"replication": 3, "compression": "aggressive", "quotaGB": 100},
			"imagePool":     map[string]any{"replication": 3, "compression": "aggressive", "quotaGB": 10},
			"ephemeralPool": map[string]any{"enabled": true, "replication": 2, "quotaGB": 20},
			"filesystem":    map[string]any{"enabled": false, "dataPoolReplication": 3, "metadataPoolReplication": 3},
			"objectStore":   map[string]any{"enabled": false, "dataPoolReplication": 3},
		}},
	}
	for _, m := range mutate {
		m(s)
	}
	return s
}

// world is a landscape and the observed state of one cloud.
type world struct {
	hv, st, cp, clouds []string
	// undecided: the hypervisor pools have decided no shares yet (see
	// decidedPools).
	undecided bool
	observed  map[string]string
	input     string
	// claim is what Crossplane supplies as the cloud's claim; team-a's,
	// naming no connection secret, when nil.
	claim []string
	// named are the nodes each hypervisor pool has named for a cloud
	// (pool → cloud → nodes), as its status.shares[].nodes says, and
	// draining those it still holds beyond its share, outOfService those
	// of them its agents report out of service.
	named, draining, outOfService map[string]map[string][]string
	// left are shares of clouds that no longer name the pool (pool →
	// share), as the pool's status still holds them.
	left map[string][]any
}

func eu() world {
	return world{
		hv: []string{hvPool("hv-pool-a", "eu-de-1", 50, "Ready"), hvPool("hv-pool-b", "eu-de-1", 100, "Ready"),
			hvPool("hv-pool-fin", "eu-de-1", 12, "Ready", dedicatedTo("finance")), hvPool("hv-pool-us", "us-east-1", 75, "Ready")},
		st: []string{stPool("st-pool-a", "eu-de-1", "Ready"), stPool("st-pool-b", "eu-de-1", "Ready"),
			stPool("st-pool-fin", "eu-de-1", "Ready", dedicatedTo("finance")), stPool("st-pool-us", "us-east-1", "Ready")},
		cp:       []string{cpCluster("cp-eu-de-1", "eu-de-1", "Ready"), cpCluster("cp-us-east-1", "us-east-1", "Ready")},
		observed: map[string]string{},
		input:    `{"apiVersion": "input.crossplane.c5c3.io/v1alpha1", "kind": "CloudSettings", "environment": "production", "endpointDomain": "cloud.example"}`,
	}
}

// request is what Crossplane sends the function about the cloud xr: the
// requirements the function asks for answered from the world, as core's
// fetcher answers them from the cluster.
func (w world) request(xr string) *fnv1.RunFunctionRequest {
	return w.requestFulfilled(xr, false)
}

func (w world) requestFulfilled(xr string, legacy bool) *fnv1.RunFunctionRequest {
	req := fntest.WithInput(fntest.Request(xr, w.observed), w.input)
	first, err := (&Function{log: logging.NewNopLogger()}).RunFunction(context.Background(), req)
	if err != nil {
		panic(err)
	}
	claim := w.claim
	if claim == nil {
		claim = []string{claimOfTeamA("")}
	}
	objects := slices.Concat(w.decidedPools(xr), w.decidedStoragePools(xr), w.cp, claim)
	return fntest.Fulfil(req, first.GetRequirements(), legacy, objects...)
}

// decidedPools are the world's hypervisor pools with the shares each has
// decided (pool.Decide), as function-hypervisor-cluster publishes them: the
// shares the clouds' status holds stay theirs, and every cloud on the pool,
// xr's too, has asked for its share since its creation. A world whose pools
// are undecided has them without shares.
func (w world) decidedPools(xr string) []string {
	if w.undecided {
		return w.hv
	}
	clouds := make([]*v1alpha1.XOpenStackCluster, 0, len(w.clouds)+1)
	for _, j := range append([]string{xr}, w.clouds...) {
		c := &v1alpha1.XOpenStackCluster{}
		if err := json.Unmarshal([]byte(j), c); err != nil {
			panic(err)
		}
		clouds = append(clouds, c)
	}
	out := make([]string, 0, len(w.hv))
	for _, j := range w.hv {
		p := &v1alpha1.XHypervisorCluster{}
		if err := json.Unmarshal([]byte(j), p); err != nil {
			out = append(out, j)
			continue
		}
		var before []pool.Share
		var records []pool.Record
		for _, c := range clouds {
			if !slices.Contains(c.Spec.HypervisorClusters, p.Spec.Name) {
				continue
			}
			held := recordedNodes(c, string(p.Spec.Name))
			who := claimOf(c.GetLabels(), c.GetName())
			if held > 0 {
				before = append(before, pool.Share{Cloud: c.GetName(), Claim: who, Asked: int64(held), Allocated: int64(held)})
			}
			records = append(records, pool.Record{Cloud: c.GetName(), Who: who, Asked: int64(asked(c, p, held)), Allocated: int64(held), Since: c.GetCreationTimestamp().Time})
		}
		d := pool.Decide(int64(p.Spec.Workers), before, records)
		out = append(out, fntest.Edit(j, func(m map[string]any) {
			status := fntest.Map(m, "status")
			shares := []any{}
			for _, s := range d.Shares {
				share := map[string]any{"cloud": s.Cloud, "claim": s.Claim, "asked": s.Asked, "allocated": s.Allocated}
				if nodes := w.named[string(p.Spec.Name)][s.Cloud]; nodes != nil {
					share["nodes"] = nodes
				}
				if nodes := w.draining[string(p.Spec.Name)][s.Cloud]; nodes != nil {
					share["draining"] = nodes
					share["instances"] = 2 * len(nodes)
				}
				if nodes := w.outOfService[string(p.Spec.Name)][s.Cloud]; nodes != nil {
					share["outOfService"] = nodes
				}
				shares = append(shares, share)
			}
			status["shares"], status["allocatedNodes"] = append(shares, w.left[string(p.Spec.Name)]...), d.Allocated
		}))
	}
	return out
}

// decidedStoragePools are the world's storage pools sharing out their
// targetCapacity (100Ti unless set), with the shares each has decided, as
// function-storage-cluster publishes them: every cloud on the pool, xr's
// too, has asked for its quota since its creation, and a pool whose status
// already has shares keeps them.
func (w world) decidedStoragePools(xr string) []string {
	in := &input.CloudSettings{}
	_ = json.Unmarshal([]byte(w.input), in) //nolint:errcheck // the tests' own input
	clouds := make([]*cloud, 0, len(w.clouds)+1)
	for _, j := range append([]string{xr}, w.clouds...) {
		x := &v1alpha1.XOpenStackCluster{}
		if err := json.Unmarshal([]byte(j), x); err != nil {
			panic(err)
		}
		clouds = append(clouds, &cloud{xr: x, in: in, name: x.GetName()})
	}
	out := make([]string, 0, len(w.st))
	for _, j := range w.st {
		p := &v1alpha1.XStorageCluster{}
		if err := json.Unmarshal([]byte(j), p); err != nil {
			out = append(out, j)
			continue
		}
		capacity := int64(100 << 10)
		if q, err := apiresource.ParseQuantity(string(p.Spec.Ceph.TargetCapacity)); err == nil {
			capacity = q.Value() >> 30
		}
		if p.Status.Shares != nil {
			out = append(out, j)
			continue
		}
		var records []pool.Record
		for _, c := range clouds {
			if slices.Contains(c.xr.Spec.StorageClusters, p.Spec.Name) {
				records = append(records, pool.Record{Cloud: c.name, Who: claimOf(c.xr.GetLabels(), c.name), Asked: askedGB(c, p, nil), Since: c.xr.GetCreationTimestamp().Time})
			}
		}
		d := pool.Decide(capacity, nil, records)
		out = append(out, fntest.Edit(j, func(m map[string]any) {
			status := fntest.Map(m, "status")
			shares := []any{}
			for _, s := range d.Shares {
				shares = append(shares, map[string]any{"cloud": s.Cloud, "claim": s.Claim, "askedGB": s.Asked, "allocatedGB": s.Allocated})
			}
			status["shares"], status["allocatedGB"], status["shareableGB"] = shares, d.Allocated, capacity
		}))
	}
	return out
}

// claimOfTeamA is team-a's claim as Crossplane supplies it; secret is the
// connection secret it names, none when empty.
func claimOfTeamA(secret string) string {
	spec := map[string]any{}
	if secret != "" {
		spec["writeConnectionSecretToRef"] = map[string]any{"name": secret}
	}
	b, err := json.Marshal(map[string]any{"apiVersion": "crossplane.c5c3.io/v1alpha1", "kind": "OpenStackCluster",
		"metadata": map[string]any{"name": "team-a-prod-7xk2p", "namespace": "team-a"}, "spec": spec})
	if err != nil {
		panic(err)
	}
	return string(b)
}

func run(t *testing.T, req *fnv1.RunFunctionRequest) *fnv1.RunFunctionResponse {
	t.Helper()
	rsp, err := (&Function{log: logging.NewNopLogger()}).RunFunction(context.Background(), req)
	if err != nil {
		t.Fatalf("RunFunction: %v", err)
	}
	return rsp
}

// The team-a cloud of the tests.
func teamA(mutate ...func(map[string]any)) string {
	return cloudXR("team-a-prod-7xk2p", "team-a", "2026-11-10T00:00:00Z", spec(mutate...), "", nil)
}

func fatal(rsp *fnv1.RunFunctionResponse) string {
	for _, r := range rsp.GetResults() {
		if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
			return r.GetMessage()
		}
	}
	return ""
}

func mustNotFail(t *testing.T, rsp *fnv1.RunFunctionResponse) {
	t.Helper()
	if m := fatal(rsp); m != "" {
		t.Fatalf("unexpected Fatal result: %s", m)
	}
}

func resourceNames(rsp *fnv1.RunFunctionResponse) []string {
	return slices.Sorted(maps.Keys(rsp.GetDesired().GetResources()))
}

func desired(t *testing.T, rsp *fnv1.RunFunctionResponse, name string) map[string]any {
	t.Helper()
	r, ok := rsp.GetDesired().GetResources()[name]
	if !ok {
		t.Fatalf("no desired resource %q; have %v", name, resourceNames(rsp))
	}
	return r.GetResource().AsMap()
}

func status(rsp *fnv1.RunFunctionResponse) map[string]any {
	s, _ := rsp.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any)
	return s
}

func condition(rsp *fnv1.RunFunctionResponse, typ string) *fnv1.Condition {
	for _, c := range rsp.GetConditions() {
		if c.GetType() == typ {
			return c
		}
	}
	return nil
}

// get descends decoded JSON by keys and list indexes.
func get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

// Observed composed resources of later stages.
func readyObject(name string, manifestStatus map[string]any) string {
	o := map[string]any{"apiVersion": "kubernetes.crossplane.io/v1alpha2", "kind": "Object", "metadata": map[string]any{"name": name},
		"status": map[string]any{
			"conditions": []any{map[string]any{"type": "Ready", "status": "True", "reason": "Available", "lastTransitionTime": "2026-11-22T08:00:00Z"}},
			"atProvider": map[string]any{"manifest": map[string]any{"status": manifestStatus}},
		}}
	b, _ := json.Marshal(o)
	return string(b)
}

func readyManaged(apiVersion, kind, name string, atProvider map[string]any) string {
	o := map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": name},
		"status": map[string]any{
			"conditions": []any{
				map[string]any{"type": "Ready", "status": "True", "reason": "Available", "lastTransitionTime": "2026-11-22T08:00:00Z"},
				map[string]any{"type": "Synced", "status": "True", "reason": "ReconcileSuccess", "lastTransitionTime": "2026-11-22T08:00:00Z"},
			},
			"atProvider": atProvider,
		}}
	b, _ := json.Marshal(o)
	return string(b)
}

const ceph = "ceph.provider.c5c3.io/v1alpha1"

// The stages: each marks the observed state of one more stage ready.
func (w *world) namespaceReady() {
	w.observed["namespace"] = readyObject("team-a-prod-7xk2p-namespace", nil)
}

func (w *world) storageReady() {
	for _, use := range []string{"volumes", "images", "ephemeral"} {
		w.observed["ceph-st-pool-a-"+use] = readyManaged(ceph, "Pool", "team-a-prod-7xk2p-st-pool-a-"+use,
			map[string]any{"usedBytes": 1 << 30, "availableBytes": 1 << 40})
	}
	w.observed["ceph-st-pool-a-client"] = readyManaged(ceph, "Client", "team-a-prod-7xk2p-st-pool-a-client", nil)
}

func (w *world) keyCopied() {
	w.observed["ceph-st-pool-a-client-key"] = readyManaged("kubernetes.provider.c5c3.io/v1alpha1", "SecretCopy", "team-a-prod-7xk2p-st-pool-a-ceph-client", nil)
}

func (w *world) controlPlaneReady() {
	w.observed["control-plane"] = readyObject("team-a-prod-7xk2p-control-plane", map[string]any{
		"conditions": []any{map[string]any{"type": "KeystoneReady", "status": "True", "reason": "Ready", "lastTransitionTime": "2026-11-22T08:00:00Z"},
			map[string]any{"type": "Ready", "status": "True", "reason": "AllReady", "lastTransitionTime": "2026-11-22T08:00:00Z"}}})
}

func (w *world) adminReady() {
	w.observed["admin-credential"] = readyObject("team-a-prod-7xk2p-admin-credential", nil)
}

func (w *world) cloudReady() {
	w.catalogRead("compute", "identity", "network", "volumev3")
	for key, kind := range map[string]string{"project": "keystone.provider.c5c3.io/v1alpha1/Project",
		"aggregate-hv-pool-a": "nova.provider.c5c3.io/v1alpha1/Aggregate", "volume-type-st-pool-a": "cinder.provider.c5c3.io/v1alpha1/VolumeType",
		"compute-quota": "nova.provider.c5c3.io/v1alpha1/QuotaSet", "volume-quota": "cinder.provider.c5c3.io/v1alpha1/QuotaSet",
		"network-quota": "neutron.provider.c5c3.io/v1alpha1/QuotaSet", "tenant-user": "keystone.provider.c5c3.io/v1alpha1/User",
		"tenant-grant": "keystone.provider.c5c3.io/v1alpha1/RoleAssignment", "tenant-credential": "keystone.provider.c5c3.io/v1alpha1/ApplicationCredential"} {
		i := strings.LastIndex(kind, "/")
		w.observed[key] = readyManaged(kind[:i], kind[i+1:], key, nil)
	}
}

// catalogRead is the cloud's ProviderConfig once the provider has read the
// catalog types its region serves.
func (w *world) catalogRead(services ...string) {
	b, _ := json.Marshal(map[string]any{"apiVersion": "openstack.provider.c5c3.io/v1alpha1", "kind": "ProviderConfig", "metadata": map[string]any{"name": "team-a-prod-7xk2p"},
		"status": map[string]any{"catalog": map[string]any{"region": "eu-de-1", "services": services}}})
	w.observed["provider-config"] = string(b)
}

const ovn = "ovn.provider.c5c3.io/v1alpha1"

// ovnPublished is the control plane's ConfigMap of its OVN databases.
func (w *world) ovnPublished(data map[string]any) {
	o := map[string]any{"apiVersion": "kubernetes.crossplane.io/v1alpha2", "kind": "Object", "metadata": map[string]any{"name": "team-a-prod-7xk2p-ovn-databases"},
		"status": map[string]any{
			"conditions": []any{map[string]any{"type": "Ready", "status": "True", "reason": "Available", "lastTransitionTime": "2026-11-22T08:00:00Z"}},
			"atProvider": map[string]any{"manifest": map[string]any{"data": data}},
		}}
	b, _ := json.Marshal(o)
	w.observed["ovn-databases"] = string(b)
}

func (w *world) ovnReady() {
	w.ovnPublished(map[string]any{"northbound": "tcp:10.0.0.1:6641,tcp:10.0.0.2:6641 tcp:10.0.0.3:6641", "southbound": "tcp:10.0.0.1:6642"})
}

// chassisRegistered: the pool's nodes' ovn-controllers registered, one of
// them a gateway.
func (w *world) chassisRegistered(chassis ...map[string]any) {
	w.observed["ovn-provider-config"] = `{"apiVersion": "` + ovn + `", "kind": "ProviderConfig", "metadata": {"name": "team-a-prod-7xk2p"}, "spec": {"northbound": {"endpoints": ["tcp:10.0.0.1:6641"]}, "southbound": {"endpoints": ["tcp:10.0.0.1:6642"]}}}`
	list := make([]any, 0, len(chassis))
	for _, c := range chassis {
		list = append(list, c)
	}
	w.observed["chassis-hv-pool-a"] = readyManaged(ovn, "ChassisSet", "team-a-prod-7xk2p-hv-pool-a", map[string]any{"count": len(chassis), "chassis": list})
}

// accessIssued: the provider issued the control plane's access to each pool.
func (w *world) accessIssued() {
	w.observed["access-hypervisor-hv-pool-a"] = readyManaged("kubernetes.provider.c5c3.io/v1alpha1", "ClusterAccess", "team-a-prod-7xk2p-hypervisor-hv-pool-a-access", nil)
	w.observed["access-storage-st-pool-a"] = readyManaged("kubernetes.provider.c5c3.io/v1alpha1", "ClusterAccess", "team-a-prod-7xk2p-storage-st-pool-a-access", nil)
}

// accessCopied: each pool's kubeconfig is in the cloud's namespace.
func (w *world) accessCopied() {
	w.observed["access-hypervisor-hv-pool-a-kubeconfig"] = readyManaged("kubernetes.provider.c5c3.io/v1alpha1", "SecretCopy", "team-a-prod-7xk2p-hypervisor-hv-pool-a-kubeconfig", nil)
	w.observed["access-storage-st-pool-a-kubeconfig"] = readyManaged("kubernetes.provider.c5c3.io/v1alpha1", "SecretCopy", "team-a-prod-7xk2p-storage-st-pool-a-kubeconfig", nil)
}

func (w *world) gatewaysReady() {
	w.observed["gateways-hv-pool-a"] = readyManaged(ovn, "HAChassisGroup", "team-a-prod-7xk2p-hv-pool-a", nil)
}

// TestFirstCallRequiresWhatTheCloudConsumes: before Crossplane has supplied
// the required resources the function asks, in the 1.x and 2.x fields,
// for what the cloud names and nothing else: each pool and its
// control-plane cluster by claim name and by composite name (a hypervisor
// pool's status holds every cloud's share of it), and its claim. It
// composes nothing yet.
func TestFirstCallRequiresWhatTheCloudConsumes(t *testing.T) {
	req := fntest.WithInput(fntest.Request(teamA(), nil), eu().input)
	rsp := run(t, req)
	mustNotFail(t, rsp)
	if n := resourceNames(rsp); len(n) != 0 {
		t.Errorf("composed %v before the landscape was known", n)
	}
	const gv = "crossplane.c5c3.io/v1alpha1"
	byClaim := func(kind, name string) *fnv1.ResourceSelector {
		return &fnv1.ResourceSelector{ApiVersion: gv, Kind: kind, Match: &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: map[string]string{"crossplane.io/claim-name": name}}}}
	}
	byName := func(kind, name string) *fnv1.ResourceSelector {
		return &fnv1.ResourceSelector{ApiVersion: gv, Kind: kind, Match: &fnv1.ResourceSelector_MatchName{MatchName: name}}
	}
	ns := "team-a"
	want := map[string]*fnv1.ResourceSelector{
		"hypervisor/hv-pool-a":           byClaim("XHypervisorCluster", "hv-pool-a"),
		"hypervisor/hv-pool-a/composite": byName("XHypervisorCluster", "hv-pool-a"),
		"storage/st-pool-a":              byClaim("XStorageCluster", "st-pool-a"),
		"storage/st-pool-a/composite":    byName("XStorageCluster", "st-pool-a"),
		// Every control-plane cluster, until the cloud is placed in one
		// (TestControlPlaneOfTheRegion).
		"control-plane/*": {ApiVersion: gv, Kind: "XControlPlaneCluster", Match: &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{}}},
		requiredClaim:     {ApiVersion: gv, Kind: "OpenStackCluster", Match: &fnv1.ResourceSelector_MatchName{MatchName: "team-a-prod-7xk2p"}, Namespace: &ns},
	}
	for field, got := range map[string]map[string]*fnv1.ResourceSelector{
		"resources": rsp.GetRequirements().GetResources(), "extra_resources": rsp.GetRequirements().GetExtraResources()} { //nolint:staticcheck // 1.x
		if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
			t.Errorf("requirements.%s (-want +got):\n%s", field, diff)
		}
	}
}

// TestCrossplane1SuppliesExtraResources: on Crossplane 1.x the landscape
// arrives as extra_resources and the function composes from it alike.
func TestCrossplane1SuppliesExtraResources(t *testing.T) {
	w := eu()
	rsp := run(t, w.requestFulfilled(teamA(), true))
	mustNotFail(t, rsp)
	if got := get(status(rsp), "phase"); got != "Provisioning" {
		t.Errorf("phase = %v, want Provisioning", got)
	}
}

// TestStages walks the observed state through the stages of a cloud: each
// adds the next stage only when the one before is ready.
func TestStages(t *testing.T) {
	w := eu()
	storage := []string{"ceph-st-pool-a-client", "ceph-st-pool-a-ephemeral", "ceph-st-pool-a-images", "ceph-st-pool-a-volumes"}
	// What the cloud consumes is protected from the moment it is admitted.
	usages := []string{"usage-control-plane-cp-eu-de-1", "usage-hypervisor-hv-pool-a", "usage-storage-st-pool-a"}
	identityObjects := []string{"project", "provider-config", "tenant-credential", "tenant-grant", "tenant-user"}
	cloudObjects := append([]string{"aggregate-hv-pool-a", "compute-quota", "network-quota", "volume-quota", "volume-type-st-pool-a"}, identityObjects...)
	type want struct {
		resources []string
		phase     string
		// conditions that must be True; the others must be False.
		ready   []string
		message map[string]string
	}
	// The usages that order the cloud's deletion, as both ends of each
	// are observed: the namespace's by the ControlPlane, then the
	// ControlPlane's by the OpenStack and by the OVN ProviderConfig.
	order := []string{"usage-order-namespace", "usage-order-cloud", "usage-order-network"}
	// The control plane's access to each pool, and its copy.
	access := []string{"access-hypervisor-hv-pool-a", "access-storage-st-pool-a"}
	copies := []string{"access-hypervisor-hv-pool-a-kubeconfig", "access-storage-st-pool-a-kubeconfig"}
	steps := []struct {
		name  string
		apply func()
		want  want
	}{
		{"no pools", func() { w.hv, w.st = nil, nil }, want{
			resources: usages[:1], phase: "Pending", ready: []string{},
			message: map[string]string{conditionPoolsReady: "waiting: hypervisor pool hv-pool-a does not exist; storage pool st-pool-a does not exist"},
		}},
		{"pools provisioning", func() {
			w = eu()
			w.hv[0] = hvPool("hv-pool-a", "eu-de-1", 50, "Provisioning")
			w.cp[0] = cpCluster("cp-eu-de-1", "eu-de-1", "")
		}, want{
			resources: usages, phase: "Pending", ready: []string{},
			message: map[string]string{conditionPoolsReady: "waiting: hypervisor pool hv-pool-a is Provisioning; control-plane cluster cp-eu-de-1 is not reporting a phase yet"},
		}},
		{"pools ready", func() { w = eu() }, want{
			resources: slices.Concat(access, []string{"namespace"}, storage, usages), phase: "Provisioning", ready: []string{conditionPoolsReady},
			message: map[string]string{
				conditionPoolsReady:        "hypervisor pool hv-pool-a (20 of 50 nodes for this cloud), storage pool st-pool-a (370 of 102400 GB for this cloud) and control-plane cluster cp-eu-de-1 are ready",
				conditionControlPlaneReady: "namespace openstack-team-a-prod-7xk2p is being created in control-plane cluster cp-eu-de-1",
				conditionCloudReady:        "waiting for the ControlPlane",
			},
		}},
		{"namespace ready", w.namespaceReady, want{
			resources: slices.Concat(access, []string{"control-plane", "namespace"}, storage, usages), phase: "Provisioning", ready: []string{conditionPoolsReady},
			message: map[string]string{conditionControlPlaneReady: "ControlPlane openstack-team-a-prod-7xk2p/team-a-prod-7xk2p in control-plane cluster cp-eu-de-1 is being created"},
		}},
		{"storage ready", w.storageReady, want{
			resources: slices.Concat(access, []string{"ceph-st-pool-a-client-key", "control-plane", "namespace"}, storage, usages), phase: "Provisioning", ready: []string{conditionPoolsReady},
			message: map[string]string{conditionStorageReady: "the key of openstack-team-a-prod-7xk2p-st-pool-a is being copied to Secret openstack-team-a-prod-7xk2p/ceph-client-st-pool-a"},
		}},
		{"key copied", w.keyCopied, want{
			resources: slices.Concat(access, []string{"ceph-st-pool-a-client-key", "control-plane", "namespace"}, storage, usages), phase: "Provisioning",
			ready: []string{conditionPoolsReady, conditionStorageReady},
		}},
		{"the pools' access issued", w.accessIssued, want{
			resources: slices.Concat(access, copies, []string{"ceph-st-pool-a-client-key", "control-plane", "namespace"}, storage, usages), phase: "Provisioning",
			ready:   []string{conditionPoolsReady, conditionStorageReady},
			message: map[string]string{conditionControlPlaneReady: "ControlPlane openstack-team-a-prod-7xk2p/team-a-prod-7xk2p in control-plane cluster cp-eu-de-1 is being created"},
		}},
		{"the pools' kubeconfigs copied", w.accessCopied, want{
			resources: slices.Concat(access, copies, []string{"ceph-st-pool-a-client-key", "control-plane", "namespace"}, storage, usages), phase: "Provisioning",
			ready: []string{conditionPoolsReady, conditionStorageReady},
		}},
		{"control plane ready", w.controlPlaneReady, want{
			resources: slices.Concat(access, copies, []string{"admin-credential", "ceph-st-pool-a-client-key", "control-plane", "namespace", "ovn-databases"}, storage, usages, order[:1]), phase: "Provisioning",
			ready: []string{conditionPoolsReady, conditionStorageReady, conditionControlPlaneReady},
			message: map[string]string{
				conditionCloudReady:   "waiting for the admin credential Secret openstack-team-a-prod-7xk2p/k-orc-clouds-yaml in control-plane cluster cp-eu-de-1",
				conditionNetworkReady: "waiting for ConfigMap openstack-team-a-prod-7xk2p/ovn-databases in control-plane cluster cp-eu-de-1, where the c5c3-operator publishes the endpoints of the cloud's OVN databases",
			},
		}},
		{"admin credential copied", w.adminReady, want{
			// The services' objects wait for the catalog.
			resources: slices.Concat(access, copies, []string{"admin-credential", "ceph-st-pool-a-client-key", "control-plane", "namespace", "ovn-databases"}, storage, identityObjects, usages, order[:1]), phase: "Provisioning",
			ready: []string{conditionPoolsReady, conditionStorageReady, conditionControlPlaneReady},
		}},
		{"cloud objects ready", w.cloudReady, want{
			resources: slices.Concat(access, copies, []string{"admin-credential", "ceph-st-pool-a-client-key", "control-plane", "namespace", "ovn-databases"}, storage, cloudObjects, usages, order[:2]), phase: "Provisioning",
			ready: []string{conditionPoolsReady, conditionStorageReady, conditionControlPlaneReady, conditionCloudReady},
		}},
		{"OVN databases published", w.ovnReady, want{
			resources: slices.Concat(access, copies, []string{"admin-credential", "ceph-st-pool-a-client-key", "chassis-hv-pool-a", "control-plane", "namespace", "ovn-databases", "ovn-provider-config"}, storage, cloudObjects, usages, order[:2]), phase: "Provisioning",
			ready: []string{conditionPoolsReady, conditionStorageReady, conditionControlPlaneReady, conditionCloudReady},
			message: map[string]string{
				conditionNetworkReady: "no chassis of hypervisor pool hv-pool-a is registered in the cloud's OVN Southbound yet (its nodes' ovn-controller, with the OVS agent announcing availability zone hv-pool-a)",
			},
		}},
		{"chassis registered", func() {
			w.chassisRegistered(map[string]any{"name": "node-b", "gateway": false}, map[string]any{"name": "node-c", "gateway": true}, map[string]any{"name": "node-a"})
		}, want{
			resources: slices.Concat(access, copies, []string{"admin-credential", "ceph-st-pool-a-client-key", "chassis-hv-pool-a", "control-plane", "gateways-hv-pool-a", "namespace", "ovn-databases", "ovn-provider-config"}, storage, cloudObjects, usages, order), phase: "Provisioning",
			ready:   []string{conditionPoolsReady, conditionStorageReady, conditionControlPlaneReady, conditionCloudReady},
			message: map[string]string{conditionNetworkReady: "OVN HA chassis group team-a-prod-7xk2p-hv-pool-a of hypervisor pool hv-pool-a is Creating"},
		}},
		{"gateway group ready", w.gatewaysReady, want{
			resources: slices.Concat(access, copies, []string{"admin-credential", "ceph-st-pool-a-client-key", "chassis-hv-pool-a", "control-plane", "gateways-hv-pool-a", "namespace", "ovn-databases", "ovn-provider-config"}, storage, cloudObjects, usages, order), phase: "Ready",
			ready:   []string{conditionPoolsReady, conditionStorageReady, conditionControlPlaneReady, conditionCloudReady, conditionNetworkReady},
			message: map[string]string{conditionNetworkReady: "the cloud's OVN has an HA chassis group of gateway chassis in each of its 1 hypervisor pool(s)"},
		}},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			s.apply()
			rsp := run(t, w.request(teamA()))
			mustNotFail(t, rsp)
			want := slices.Clone(s.want.resources)
			slices.Sort(want)
			if diff := cmp.Diff(want, resourceNames(rsp), cmp.Comparer(func(a, b []string) bool { return slices.Equal(a, b) })); len(want)+len(resourceNames(rsp)) > 0 && diff != "" {
				t.Errorf("composed resources (-want +got):\n%s", diff)
			}
			if got := get(status(rsp), "phase"); got != s.want.phase {
				t.Errorf("phase = %v, want %s", got, s.want.phase)
			}
			// Never Ready before the whole cloud is: the resources composed
			// so far may all be ready between two stages.
			wantReady := fnv1.Ready_READY_FALSE
			if s.want.phase == "Ready" {
				wantReady = fnv1.Ready_READY_UNSPECIFIED
			}
			if got := rsp.GetDesired().GetComposite().GetReady(); got != wantReady {
				t.Errorf("the composite's readiness = %v, want %v in phase %s", got, wantReady, s.want.phase)
			}
			for _, typ := range []string{conditionPoolsReady, conditionStorageReady, conditionControlPlaneReady, conditionCloudReady, conditionNetworkReady} {
				c := condition(rsp, typ)
				wantTrue := slices.Contains(s.want.ready, typ)
				if (c.GetStatus() == fnv1.Status_STATUS_CONDITION_TRUE) != wantTrue {
					t.Errorf("condition %s = %v (%s), want true: %v", typ, c.GetStatus(), c.GetMessage(), wantTrue)
				}
				if m, ok := s.want.message[typ]; ok && c.GetMessage() != m {
					t.Errorf("condition %s message:\n got %q\nwant %q", typ, c.GetMessage(), m)
				}
			}
		})
	}

	t.Run("ready cloud reports endpoints, usage and the key's Secret", func(t *testing.T) {
		rsp := run(t, w.request(teamA()))
		st := status(rsp)
		if got := get(st, "endpoints", "keystone"); got != "https://keystone.team-a-prod-7xk2p.cloud.example" {
			t.Errorf("status.endpoints.keystone = %v", got)
		}
		if got := get(st, "cephResources", 0, "volumePool", "usedBytes"); got != float64(1<<30) {
			t.Errorf("status.cephResources[0].volumePool.usedBytes = %v", got)
		}
		if got := get(st, "cephResources", 0, "client", "secretRef", "name"); got != "ceph-client-st-pool-a" {
			t.Errorf("status.cephResources[0].client.secretRef.name = %v", got)
		}
		// The tenant's credential reaches the claim from the provider, never
		// through the function.
		if got := rsp.GetDesired().GetComposite().GetConnectionDetails(); len(got) != 0 {
			t.Errorf("the function publishes connection details itself: %v", got)
		}
		if c := condition(rsp, conditionCloudReady); !strings.Contains(c.GetMessage(), "log in with the clouds.yaml (cloud team-a-prod-7xk2p) in Secret team-a/team-a-prod-7xk2p-credentials") {
			t.Errorf("CloudReady does not say where to log in: %s", c.GetMessage())
		}
		if got := get(st, "consumedPools", "hypervisor", 0, "allocatedNodes"); got != float64(20) {
			t.Errorf("status.consumedPools.hypervisor[0].allocatedNodes = %v", got)
		}
	})

	t.Run("a ready cloud whose pool degrades is Degraded", func(t *testing.T) {
		w.hv[0] = hvPool("hv-pool-a", "eu-de-1", 50, "Provisioning")
		xr := cloudXR("team-a-prod-7xk2p", "team-a", "2026-11-10T00:00:00Z", spec(), "Ready", map[string]int{"hv-pool-a": 20})
		rsp := run(t, w.request(xr))
		if got := get(status(rsp), "phase"); got != "Degraded" {
			t.Errorf("phase = %v, want Degraded", got)
		}
		// Nothing is taken away while a pool recovers: Crossplane deletes
		// what a function stops desiring.
		if got := len(resourceNames(rsp)) - len(usages) - len(order); got != len(w.observed) {
			t.Errorf("desires %d resources while degraded, observed %d: %v", got, len(w.observed), resourceNames(rsp))
		}
	})

	t.Run("a pool that fails before the cloud served makes it Failed", func(t *testing.T) {
		w = eu()
		w.st[0] = stPool("st-pool-a", "eu-de-1", "Failed")
		rsp := run(t, w.request(teamA()))
		if got := get(status(rsp), "phase"); got != "Failed" {
			t.Errorf("phase = %v, want Failed", got)
		}
		if c := condition(rsp, conditionPoolsReady); c.GetReason() != "PoolFailed" || c.GetMessage() != "waiting: storage pool st-pool-a has failed" {
			t.Errorf("PoolsReady = %s: %s", c.GetReason(), c.GetMessage())
		}
	})
}

// TestStagesBesideProvisioningPools: a cloud admitted by every pool and
// whose control-plane cluster is Ready composes its stages in the
// control-plane cluster while its pools' clusters are still being made,
// and what goes into a pool's cluster only once that pool is Ready. What a
// pool's stage made is kept should the pool leave Ready again.
func TestStagesBesideProvisioningPools(t *testing.T) {
	w := eu()
	provisioning := func() {
		w.hv[0] = hvPool("hv-pool-a", "eu-de-1", 50, "Provisioning")
		w.st[0] = stPool("st-pool-a", "eu-de-1", "Provisioning")
	}
	provisioning()
	usages := []string{"usage-control-plane-cp-eu-de-1", "usage-hypervisor-hv-pool-a", "usage-storage-st-pool-a"}
	identity := []string{"project", "provider-config", "tenant-credential", "tenant-grant", "tenant-user"}
	inPools := []string{"access-hypervisor-hv-pool-a", "access-storage-st-pool-a", "ceph-st-pool-a-client", "ceph-st-pool-a-ephemeral", "ceph-st-pool-a-images", "ceph-st-pool-a-volumes"}
	steps := []struct {
		name      string
		apply     func()
		resources []string
		messages  map[string]string
	}{
		{"admitted, pools provisioning", func() {}, slices.Concat([]string{"namespace"}, usages), map[string]string{
			conditionPoolsReady:   "waiting: hypervisor pool hv-pool-a is Provisioning; storage pool st-pool-a is Provisioning",
			conditionStorageReady: "the tenant's Ceph pools in st-pool-a wait for the storage pool to be Ready",
		}},
		{"control plane and identity", func() { w.namespaceReady(); w.controlPlaneReady(); w.adminReady() },
			slices.Concat([]string{"admin-credential", "control-plane", "namespace", "ovn-databases"}, identity, usages, []string{"usage-order-namespace"}), map[string]string{
				conditionControlPlaneReady: "ControlPlane openstack-team-a-prod-7xk2p/team-a-prod-7xk2p in control-plane cluster cp-eu-de-1 is ready; the control plane's access to hv-pool-a waits for the pool to be Ready; the control plane's access to st-pool-a waits for the pool to be Ready",
			}},
		{"pools ready", func() {
			w.hv[0], w.st[0] = hvPool("hv-pool-a", "eu-de-1", 50, "Ready"), stPool("st-pool-a", "eu-de-1", "Ready")
		},
			slices.Concat([]string{"admin-credential", "control-plane", "namespace", "ovn-databases"}, identity, inPools, usages, []string{"usage-order-namespace"}), nil},
		{"a pool's stage is kept when the pool leaves Ready", func() { w.storageReady(); w.accessIssued(); provisioning() },
			slices.Concat([]string{"access-hypervisor-hv-pool-a-kubeconfig", "access-storage-st-pool-a-kubeconfig", "admin-credential", "ceph-st-pool-a-client-key", "control-plane", "namespace", "ovn-databases"}, identity, inPools, usages, []string{"usage-order-namespace"}), nil},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			s.apply()
			rsp := run(t, w.request(teamA()))
			mustNotFail(t, rsp)
			want := slices.Sorted(slices.Values(s.resources))
			if diff := cmp.Diff(want, resourceNames(rsp)); diff != "" {
				t.Errorf("composed resources (-want +got):\n%s", diff)
			}
			// Pending while a pool is not Ready: the claim says which.
			if got := get(status(rsp), "phase"); got != "Pending" && s.name != "pools ready" {
				t.Errorf("phase = %v, want Pending", got)
			}
			if c := condition(rsp, conditionPoolsReady); (c.GetStatus() == fnv1.Status_STATUS_CONDITION_TRUE) != (s.name == "pools ready") {
				t.Errorf("PoolsReady = %v (%s)", c.GetStatus(), c.GetMessage())
			}
			for typ, m := range s.messages {
				if got := condition(rsp, typ).GetMessage(); got != m {
					t.Errorf("condition %s message:\n got %q\nwant %q", typ, got, m)
				}
			}
		})
	}
}

// TestRefusals: every policy rule refuses a new cloud with a message that
// names the field and the pool, on the claim the tenant reads, and composes
// nothing.
func TestRefusals(t *testing.T) {
	hv := func(entries ...any) func(map[string]any) {
		return func(s map[string]any) { setPools(s, entries...) }
	}
	cases := map[string]struct {
		xr     string
		mutate func(w *world)
		want   string
		// composition: the Composition's input is at fault, not the claim.
		composition bool
		// queued: the pool has no room; the cloud's request stays
		// recorded on its usage of it, and nothing else is composed.
		// queuedGB likewise, of a storage pool.
		queued, queuedGB string
	}{
		"hypervisor pool in another region": {
			xr:   teamA(hv(map[string]any{"name": "hv-pool-us", "nodes": 5})),
			want: "spec.hypervisorClusters[0]: hypervisor pool hv-pool-us is in region us-east-1, the cloud in eu-de-1",
		},
		"storage pool in another region": {
			xr:   teamA(func(s map[string]any) { s["storageClusters"] = []any{"st-pool-a", "st-pool-us"} }),
			want: "spec.storageClusters[1]: storage pool st-pool-us is in region us-east-1, the cloud in eu-de-1",
		},
		"control-plane cluster in another region": {
			xr:   teamA(func(s map[string]any) { s["controlPlaneCluster"] = "cp-us-east-1" }),
			want: "spec.controlPlaneCluster: control-plane cluster cp-us-east-1 is in region us-east-1, the cloud in eu-de-1",
		},
		"another tenant's dedicated hypervisor pool": {
			xr:   teamA(hv(map[string]any{"name": "hv-pool-fin"})),
			want: "spec.hypervisorClusters[0]: hypervisor pool hv-pool-fin is dedicated to other tenants; tenant team-a may not use it",
		},
		"another tenant's dedicated storage pool": {
			xr:   teamA(func(s map[string]any) { s["storageClusters"] = []any{"st-pool-fin"} }),
			want: "spec.storageClusters[0]: storage pool st-pool-fin is dedicated to other tenants; tenant team-a may not use it",
		},
		"a pool dedicated by its label, open to no tenant yet": {
			// As the C5C3 docs write hv-pool-compliance: labels.dedicated,
			// no allowedTenants. Naming them is the platform's choice.
			xr: teamA(hv(map[string]any{"name": "hv-pool-fin"})),
			mutate: func(w *world) {
				w.hv[2] = hvPool("hv-pool-fin", "eu-de-1", 12, "Ready", func(s map[string]any) { s["labels"] = map[string]any{"dedicated": "true"} })
			},
			want: "spec.hypervisorClusters[0]: hypervisor pool hv-pool-fin is dedicated (spec.labels.dedicated) and open to no tenant yet: a platform engineer names the tenant namespaces it serves in its spec.allowedTenants",
		},
		"an unclaimed composite on a dedicated pool": {
			xr: compositeJSON("XOpenStackCluster", "direct", "", "", "2026-11-10T00:00:00Z",
				spec(hv(map[string]any{"name": "hv-pool-fin"})), map[string]any{}),
			want: "spec.hypervisorClusters[0]: hypervisor pool hv-pool-fin is dedicated to the tenants it names, and a composite without a claim belongs to none",
		},
		"a default share that does not fit": {
			xr: teamA(hv("hv-pool-a")),
			mutate: func(w *world) {
				w.clouds = []string{
					cloudXR("team-b-staging-1", "team-b", "2026-11-02T00:00:00Z", spec(hv(map[string]any{"name": "hv-pool-a", "nodes": 45})), "Ready", map[string]int{"hv-pool-a": 45}),
				}
			},
			want:   "spec.hypervisorClusters[0]: hypervisor pool hv-pool-a would be over-committed: of its 50 nodes, 5 are free (45 nodes held by 1 other cloud), and the cloud asks for 8 (the default share of a large cloud: set spec.hypervisorShares to ask for fewer); until every pool has room for it, the cloud holds nothing of storage pool st-pool-a",
			queued: "8",
		},
		"an over-committed shared storage pool": {
			xr: teamA(),
			mutate: func(w *world) {
				w.st[0] = fntest.Edit(stPool("st-pool-a", "eu-de-1", "Ready", func(s map[string]any) { s["ceph"] = map[string]any{"targetCapacity": "1Ti"} }), func(m map[string]any) {
					st := fntest.Map(m, "status")
					st["shareableGB"], st["shares"] = 1024, []any{
						map[string]any{"cloud": "team-b-staging-1", "claim": "team-b/team-b-staging-1", "askedGB": 900, "allocatedGB": 900},
						map[string]any{"cloud": "team-a-prod-7xk2p", "claim": "team-a/team-a-prod-7xk2p", "askedGB": 370, "allocatedGB": 0},
					}
				})
			},
			want:     "spec.storage.ceph: storage pool st-pool-a would be over-committed: of its 1024 GB, 124 are free (900 GB held by 1 other cloud), and the cloud asks for 370 (volumePool 100 GB × 3 replicas + imagePool 10 GB × 3 replicas + ephemeralPool 20 GB × 2 replicas); until every pool has room for it, the cloud holds nothing of hypervisor pool hv-pool-a",
			queuedGB: "370",
		},
		"a volume pool quota larger than the storage pool": {
			xr: teamA(),
			mutate: func(w *world) {
				w.st[0] = stPool("st-pool-a", "eu-de-1", "Ready", func(s map[string]any) { s["ceph"] = map[string]any{"targetCapacity": "200Gi"} })
			},
			want: "spec.storage.ceph: the cloud asks for 370 GB of storage pool st-pool-a (volumePool 100 GB × 3 replicas + imagePool 10 GB × 3 replicas + ephemeralPool 20 GB × 2 replicas), which shares out 200 GB",
		},
		"unlimited, where the Composition caps the quota": {
			xr: teamA(func(s map[string]any) { s["quotas"] = map[string]any{"compute": map[string]any{"cores": -1}} }),
			mutate: func(w *world) {
				w.input = `{"apiVersion": "input.crossplane.c5c3.io/v1alpha1", "kind": "CloudSettings", "environment": "staging", "maxQuotas": {"cores": 100}}`
			},
			want: "spec.quotas.compute.cores: unlimited (-1) exceeds this Composition's cap of 100 (maxQuotas.cores of its staging variant): ask for at most 100",
		},
		"a volume pool quota above the Composition's cap": {
			xr: teamA(),
			mutate: func(w *world) {
				w.input = `{"apiVersion": "input.crossplane.c5c3.io/v1alpha1", "kind": "CloudSettings", "environment": "staging", "maxQuotas": {"volumePoolGB": 50}}`
			},
			want: "spec.storage.ceph.volumePool.quotaGB: 100 exceeds this Composition's cap of 50 GB (maxQuotas.volumePoolGB of its staging variant): ask for at most 50",
		},
		"a share larger than the pool": {
			xr:   teamA(hv(map[string]any{"name": "hv-pool-b", "nodes": 10}, map[string]any{"name": "hv-pool-a", "nodes": 51})),
			want: "spec.hypervisorShares[1].nodes (51) exceeds the 50 nodes of hypervisor pool hv-pool-a",
		},
		"an over-committed shared pool": {
			xr: teamA(hv(map[string]any{"name": "hv-pool-a", "nodes": 30})),
			mutate: func(w *world) {
				w.clouds = []string{
					cloudXR("team-b-staging-1", "team-b", "2026-11-02T00:00:00Z", spec(hv(map[string]any{"name": "hv-pool-a", "nodes": 15})), "Ready", map[string]int{"hv-pool-a": 15}),
					cloudXR("internal-prod-1", "internal", "2026-11-03T00:00:00Z", spec(hv(map[string]any{"name": "hv-pool-a", "nodes": 10})), "Ready", map[string]int{"hv-pool-a": 10}),
				}
			},
			want:   "spec.hypervisorShares[0].nodes: hypervisor pool hv-pool-a would be over-committed: of its 50 nodes, 25 are free (25 nodes held by 2 other clouds), and the cloud asks for 30; until every pool has room for it, the cloud holds nothing of storage pool st-pool-a",
			queued: "30",
		},
		"a size above the Composition's cap in its input": {
			xr: teamA(),
			mutate: func(w *world) {
				w.input = `{"apiVersion": "input.crossplane.c5c3.io/v1alpha1", "kind": "CloudSettings", "environment": "staging", "maxSize": "huge"}`
			},
			want:        `the Composition's input maxSize "huge" must be one of small, medium, large, xlarge`,
			composition: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := eu()
			if tc.mutate != nil {
				tc.mutate(&w)
			}
			rsp := run(t, w.request(tc.xr))
			switch n := resourceNames(rsp); {
			case tc.queuedGB != "":
				rec := get(desired(t, rsp, "usage-storage-st-pool-a"), "metadata", "annotations")
				if !slices.Equal(n, []string{"usage-hypervisor-hv-pool-a", "usage-storage-st-pool-a"}) || get(rec, "c5c3.io/asked-gb") != tc.queuedGB || get(rec, "c5c3.io/allocated-gb") != "0" || get(rec, "c5c3.io/asked-since") == nil {
					t.Errorf("composed %v, the record %v; want only the share records of its pools, the request for %s GB of st-pool-a", n, rec, tc.queuedGB)
				}
				asksNothing(t, desired(t, rsp, "usage-hypervisor-hv-pool-a"), pool.Nodes)
			case tc.queued != "":
				rec := get(desired(t, rsp, "usage-hypervisor-hv-pool-a"), "metadata", "annotations")
				if !slices.Equal(n, []string{"usage-hypervisor-hv-pool-a", "usage-storage-st-pool-a"}) || get(rec, "c5c3.io/asked-nodes") != tc.queued || get(rec, "c5c3.io/allocated-nodes") != "0" || get(rec, "c5c3.io/asked-since") == nil {
					t.Errorf("composed %v, the record %v; want only the share records of its pools, the request for %s nodes of hv-pool-a", n, rec, tc.queued)
				}
				asksNothing(t, desired(t, rsp, "usage-storage-st-pool-a"), pool.Gigabytes)
			case len(n) != 0:
				t.Errorf("composed %v although refused", n)
			}
			if tc.composition {
				// The Composition's own error is the platform team's: a
				// Fatal result on the composite.
				if got := fatal(rsp); got != tc.want {
					t.Errorf("Fatal result:\n got %q\nwant %q", got, tc.want)
				}
				return
			}
			mustNotFail(t, rsp)
			got := refusal(t, rsp)
			if got != tc.want {
				t.Errorf("refusal on the claim:\n got %q\nwant %q", got, tc.want)
			}
			// The tenant reads it: it says how much is free, never whose
			// the rest is, nor which tenants a pool serves.
			for _, other := range []string{"team-b", "internal", "finance", "tenant-customer-a"} {
				if regexp.MustCompile(`\b` + regexp.QuoteMeta(other) + `\b`).MatchString(got) {
					t.Errorf("the refusal names another tenant or its cloud (%s): %q", other, got)
				}
			}
			if got := get(status(rsp), "phase"); got != "Refused" {
				t.Errorf("status.phase = %v, want Refused", got)
			}
			if got := rsp.GetDesired().GetComposite().GetReady(); got != fnv1.Ready_READY_FALSE {
				t.Errorf("the refused composite's readiness = %v, want READY_FALSE", got)
			}
		})
	}
}

// asksNothing fails unless the share record on a cloud's usage of a pool
// asks for nothing and holds nothing: a cloud refused by another of its
// pools gives back what this one gave it.
func asksNothing(t *testing.T, usage map[string]any, u pool.Unit) {
	t.Helper()
	rec := get(usage, "metadata", "annotations")
	if get(rec, u.Asked) != "0" || get(rec, u.Allocated) != "0" || get(rec, pool.AnnotationAskedSince) != nil {
		t.Errorf("the record of a cloud refused by another pool: %v; want %s and %s 0, no %s", rec, u.Asked, u.Allocated, pool.AnnotationAskedSince)
	}
}

// refusal is the message of a refusal as the tenant sees it on the claim:
// the PoolsReady condition (reason Refused) and a Warning event, both
// targeted at the composite and its claim, must say the same.
func refusal(t *testing.T, rsp *fnv1.RunFunctionResponse) string {
	t.Helper()
	c := condition(rsp, conditionPoolsReady)
	if c.GetStatus() != fnv1.Status_STATUS_CONDITION_FALSE || c.GetReason() != "Refused" || c.GetTarget() != fnv1.Target_TARGET_COMPOSITE_AND_CLAIM {
		t.Errorf("PoolsReady = %v %s (target %v), want False Refused on the composite and its claim", c.GetStatus(), c.GetReason(), c.GetTarget())
	}
	var events []string
	for _, r := range rsp.GetResults() {
		if r.GetSeverity() == fnv1.Severity_SEVERITY_WARNING && r.GetReason() == "Refused" && r.GetTarget() == fnv1.Target_TARGET_COMPOSITE_AND_CLAIM {
			events = append(events, r.GetMessage())
		}
	}
	if len(events) != 1 || events[0] != c.GetMessage() {
		t.Errorf("Warning events (reason Refused, to the claim) = %q, want one saying %q", events, c.GetMessage())
	}
	return c.GetMessage()
}

// TestRefusalKeepsARunningCloud: a running cloud whose claim is changed into
// one policy refuses keeps everything it has (a Fatal result, so Crossplane
// applies nothing), and its tenant still reads why on the claim.
func TestRefusalKeepsARunningCloud(t *testing.T) {
	w := eu()
	w.namespaceReady()
	w.clouds = []string{cloudXR("team-b-staging-1", "team-b", "2026-11-02T00:00:00Z", spec(setPoolsOf(map[string]any{"name": "hv-pool-a", "nodes": 40})), "Ready", map[string]int{"hv-pool-a": 40})}
	xr := cloudXR("team-a-prod-7xk2p", "team-a", "2026-11-10T00:00:00Z", spec(setPoolsOf(map[string]any{"name": "hv-pool-a", "nodes": 20})), "Ready", map[string]int{"hv-pool-a": 10})
	rsp := run(t, w.request(xr))
	want := "spec.hypervisorShares[0].nodes: hypervisor pool hv-pool-a would be over-committed: of its 50 nodes, 10 are free (40 nodes held by 1 other cloud), and the cloud asks for 20"
	if got := fatal(rsp); got != want {
		t.Errorf("Fatal result:\n got %q\nwant %q", got, want)
	}
	if got := refusal(t, rsp); got != want {
		t.Errorf("refusal on the claim:\n got %q\nwant %q", got, want)
	}
	if rsp.GetDesired().GetComposite() != nil || len(resourceNames(rsp)) != 0 {
		t.Errorf("a refused running cloud's response changes its composite or resources: %v", rsp.GetDesired())
	}
}

// setPoolsOf is setPools as a spec mutation.
func setPoolsOf(entries ...any) func(map[string]any) {
	return func(s map[string]any) { setPools(s, entries...) }
}

// teamAWithMissingPool is team-a's cloud on hv-pool-a and on hv-pool-new,
// which does not exist.
func teamAWithMissingPool() string {
	return teamA(func(s map[string]any) {
		setPools(s, map[string]any{"name": "hv-pool-a", "nodes": 20}, map[string]any{"name": "hv-pool-new", "nodes": 4})
	})
}

// TestMissingPoolWaits: a pool that does not exist is not a refusal: the
// cloud waits, says which pool, and records the pools it could allocate.
func TestMissingPoolWaits(t *testing.T) {
	w := eu()
	xr := teamAWithMissingPool()
	rsp := run(t, w.request(xr))
	mustNotFail(t, rsp)
	c := condition(rsp, conditionPoolsReady)
	if c.GetReason() != "PoolNotFound" || c.GetMessage() != "waiting: hypervisor pool hv-pool-new does not exist" {
		t.Errorf("PoolsReady = %s: %s", c.GetReason(), c.GetMessage())
	}
	want := []any{
		map[string]any{"name": "hv-pool-a", "status": "Ready", "nodeCount": float64(50), "allocatedNodes": float64(20)},
		map[string]any{"name": "hv-pool-new", "status": "NotFound"},
	}
	if diff := cmp.Diff(want, get(status(rsp), "consumedPools", "hypervisor")); diff != "" {
		t.Errorf("status.consumedPools.hypervisor (-want +got):\n%s", diff)
	}
}

// TestControlPlaneOfTheRegion: a cloud that names no control-plane cluster
// is placed in the only one of its region, whatever its name (the C5C3
// docs' eu-de-1-control-plane), and stays there once placed, whatever its
// region gains; a region with none makes it wait, one with several
// refuses it, naming them (#53 §1).
func TestControlPlaneOfTheRegion(t *testing.T) {
	docsCP := func(w *world) {
		w.cp = []string{cpCluster("eu-de-1-control-plane", "eu-de-1", "Ready"), cpCluster("cp-us-east-1", "us-east-1", "Ready")}
	}
	placedIn := func(cp string) func(w *world) {
		return func(w *world) { w.observed["usage-control-plane-"+cp] = usageObserved(nil) }
	}
	deleting := func(cp string) string {
		return fntest.Edit(cp, func(m map[string]any) { fntest.Map(m, "metadata")["deletionTimestamp"] = "2026-11-20T00:00:00Z" })
	}
	cases := map[string]struct {
		mutate []func(w *world)
		// in: the cluster the cloud is composed into; else waiting or
		// refused says what the claim says.
		in, waiting, refused string
	}{
		"the docs' eu-de-1-control-plane, the only one of the region": {
			mutate: []func(w *world){docsCP},
			in:     "eu-de-1-control-plane",
		},
		"placed, it stays though its region gains a second": {
			mutate: []func(w *world){placedIn("cp-eu-de-1"), (*world).namespaceReady, func(w *world) {
				w.cp = append(w.cp, cpCluster("eu-de-1-control-plane", "eu-de-1", "Ready"))
			}},
			in: "cp-eu-de-1",
		},
		"placed in one that is gone, it waits for it and moves nowhere": {
			mutate:  []func(w *world){placedIn("cp-eu-de-1-old"), (*world).namespaceReady},
			waiting: "waiting: control-plane cluster cp-eu-de-1-old does not exist",
			in:      "cp-eu-de-1-old",
		},
		"one of two being deleted: the other": {
			mutate: []func(w *world){func(w *world) {
				w.cp = append(w.cp, deleting(cpCluster("eu-de-1-control-plane", "eu-de-1", "Ready")))
			}},
			in: "cp-eu-de-1",
		},
		"none in the region: it waits": {
			mutate:  []func(w *world){func(w *world) { w.cp = []string{cpCluster("cp-us-east-1", "us-east-1", "Ready")} }},
			waiting: "waiting: a control-plane cluster in region eu-de-1 (or the one spec.controlPlaneCluster names) does not exist",
		},
		"two in the region and none named: refused, naming them": {
			mutate: []func(w *world){func(w *world) {
				w.cp = append(w.cp, cpCluster("eu-de-1-control-plane", "eu-de-1", "Ready"))
			}},
			refused: "spec.controlPlaneCluster: region eu-de-1 has 2 control-plane clusters (cp-eu-de-1, eu-de-1-control-plane) and the cloud names none: name one of them",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := eu()
			for _, m := range tc.mutate {
				m(&w)
			}
			rsp := run(t, w.request(teamA()))
			mustNotFail(t, rsp)
			switch {
			case tc.refused != "":
				if got := refusal(t, rsp); got != tc.refused {
					t.Errorf("refusal on the claim:\n got %q\nwant %q", got, tc.refused)
				}
				if n := resourceNames(rsp); len(n) != 0 {
					t.Errorf("composed %v although refused", n)
				}
			case tc.waiting != "":
				if c := condition(rsp, conditionPoolsReady); c.GetStatus() != fnv1.Status_STATUS_CONDITION_FALSE || c.GetMessage() != tc.waiting {
					t.Errorf("PoolsReady = %v: %q, want False: %q", c.GetStatus(), c.GetMessage(), tc.waiting)
				}
				for _, n := range resourceNames(rsp) {
					// What a placed cloud has stays where it is; nothing
					// new goes anywhere.
					if n == "namespace" && tc.in != "" {
						if got := get(desired(t, rsp, n), "spec", "providerConfigRef", "name"); got != "controlplane-"+tc.in {
							t.Errorf("the cloud's namespace moved to ProviderConfig %v, want it kept in controlplane-%s", got, tc.in)
						}
						continue
					}
					if strings.HasPrefix(n, "usage-control-plane-") || n == "namespace" {
						t.Errorf("composed %s while no control-plane cluster is known", n)
					}
				}
			default:
				if got := get(desired(t, rsp, "namespace"), "spec", "providerConfigRef", "name"); got != "controlplane-"+tc.in {
					t.Errorf("the cloud's namespace is placed through ProviderConfig %v, want controlplane-%s", got, tc.in)
				}
				if got := get(desired(t, rsp, "usage-control-plane-"+tc.in), "spec", "of", "resourceRef", "name"); got != tc.in+"-x1" {
					t.Errorf("the usage protects composite %v, want %s-x1", got, tc.in)
				}
				if got := get(status(rsp), "consumedPools", "controlPlaneCluster"); got != tc.in {
					t.Errorf("status.consumedPools.controlPlaneCluster = %v, want %s", got, tc.in)
				}
			}
		})
	}

	// Once placed, the cloud requires its cluster by name, no longer the
	// list of them all.
	w := eu()
	placedIn("cp-eu-de-1")(&w)
	first := run(t, fntest.WithInput(fntest.Request(teamA(), w.observed), w.input))
	got := slices.Sorted(maps.Keys(first.GetRequirements().GetResources()))
	if !slices.Contains(got, "control-plane/cp-eu-de-1") || slices.Contains(got, "control-plane/*") {
		t.Errorf("a placed cloud requires %v, want control-plane/cp-eu-de-1 by name and not control-plane/*", got)
	}
}

// TestUsagesProtectWhatTheCloudConsumes: a ClusterUsage per consumed
// composite, used by the cloud's composite (so it is released only once the
// cloud is gone) with the cloud named as its tenant knows it; none for a
// pool that does not exist (a refused cloud composes nothing but the share
// records of its hypervisor pools: TestRefusals). The usage of a
// hypervisor pool records the cloud's share of it.
func TestUsagesProtectWhatTheCloudConsumes(t *testing.T) {
	w := eu()
	xr := teamAWithMissingPool()
	rsp := run(t, w.request(xr))
	mustNotFail(t, rsp)
	want := map[string]any{
		"apiVersion": "protection.crossplane.io/v1beta1", "kind": "ClusterUsage",
		"metadata": map[string]any{
			"labels":      map[string]any{"c5c3.io/used-pool": "hv-pool-a"},
			"annotations": map[string]any{"c5c3.io/cloud": "team-a/team-a-prod-7xk2p", "c5c3.io/asked-nodes": "20", "c5c3.io/allocated-nodes": "20"},
		},
		"spec": map[string]any{
			"of":             map[string]any{"apiVersion": "crossplane.c5c3.io/v1alpha1", "kind": "XHypervisorCluster", "resourceRef": map[string]any{"name": "hv-pool-a-x1"}},
			"by":             map[string]any{"apiVersion": "crossplane.c5c3.io/v1alpha1", "kind": "XOpenStackCluster", "resourceRef": map[string]any{"name": "team-a-prod-7xk2p"}},
			"reason":         "OpenStackCluster team-a/team-a-prod-7xk2p consumes hypervisor pool hv-pool-a",
			"replayDeletion": true,
		},
	}
	got := desired(t, rsp, "usage-hypervisor-hv-pool-a")
	delete(got, "status")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("usage of hv-pool-a (-want +got):\n%s", diff)
	}
	if got := get(desired(t, rsp, "usage-storage-st-pool-a"), "spec", "of", "resourceRef", "name"); got != "st-pool-a-x1" {
		t.Errorf("the storage pool's usage is of %v", got)
	}
	if got := get(desired(t, rsp, "usage-control-plane-cp-eu-de-1"), "spec", "reason"); got != "OpenStackCluster team-a/team-a-prod-7xk2p consumes control-plane cluster cp-eu-de-1" {
		t.Errorf("the control-plane cluster's usage says %v", got)
	}
	if _, ok := rsp.GetDesired().GetResources()["usage-hypervisor-hv-pool-new"]; ok {
		t.Error("a usage of a pool that does not exist")
	}
	// Usages alone are not a stage: the cloud still waits for its pools
	// before it composes its namespace.
	for _, n := range resourceNames(rsp) {
		w.observed[n] = `{"apiVersion": "protection.crossplane.io/v1beta1", "kind": "ClusterUsage", "metadata": {"name": "` + n + `"}}`
	}
	if names := resourceNames(run(t, w.request(xr))); slices.Contains(names, "namespace") {
		t.Errorf("a cloud waiting for a pool composes its namespace once its usages exist: %v", names)
	}
}

// TestUnreadableCompositeIsSkipped: another composite that cannot be
// decoded is left out with a warning; it does not stop this cloud.
func TestUnreadableCompositeIsSkipped(t *testing.T) {
	w := eu()
	w.hv = append(w.hv, `{"apiVersion": "crossplane.c5c3.io/v1alpha1", "kind": "XHypervisorCluster", "metadata": {"name": "broken", "labels": {"crossplane.io/claim-name": "hv-pool-a"}}, "spec": {"workers": "many"}}`)
	rsp := run(t, w.request(teamA()))
	mustNotFail(t, rsp)
	want := "ignored a composite the function cannot read: XHypervisorCluster broken (spec.workers is a string; want an integer)"
	if len(rsp.GetResults()) != 1 || rsp.GetResults()[0].GetMessage() != want || rsp.GetResults()[0].GetSeverity() != fnv1.Severity_SEVERITY_WARNING {
		t.Errorf("results = %v, want one warning %q", rsp.GetResults(), want)
	}
	if got := get(status(rsp), "phase"); got != "Provisioning" {
		t.Errorf("phase = %v, want Provisioning", got)
	}
}

// TestCatalog: a service's objects are composed only when the cloud's
// catalog serves it, and Ready means serving. The c5c3 ControlPlane deploys
// no Nova or Cinder yet: a cloud whose catalog has only Keystone and
// Neutron gets no aggregates, volume types or their quotas and is not
// Ready, saying which services are missing and why; one that enables no
// compute is Ready on that catalog; a cloud whose objects exist keeps them;
// before the provider has read the catalog the cloud waits for it.
func TestCatalog(t *testing.T) {
	// Every stage ready but the services' objects.
	ready := func() world {
		w := allReady()
		for _, k := range []string{"aggregate-hv-pool-a", "compute-quota", "volume-type-st-pool-a", "volume-quota"} {
			delete(w.observed, k)
		}
		return w
	}

	t.Run("a catalog without compute and block storage", func(t *testing.T) {
		w := ready()
		w.catalogRead("identity", "network", "image")
		rsp := run(t, w.request(teamA()))
		mustNotFail(t, rsp)
		for _, k := range []string{"aggregate-hv-pool-a", "compute-quota", "volume-type-st-pool-a", "volume-quota"} {
			if slices.Contains(resourceNames(rsp), k) {
				t.Errorf("composed %s, which the cloud's APIs cannot have", k)
			}
		}
		if !slices.Contains(resourceNames(rsp), "network-quota") {
			t.Error("no network quota, though the catalog serves network")
		}
		if got := get(status(rsp), "phase"); got != "Provisioning" || rsp.GetDesired().GetComposite().GetReady() != fnv1.Ready_READY_FALSE {
			t.Errorf("phase = %v, ready %v; want Provisioning and not ready: Ready means every enabled service answers", got, rsp.GetDesired().GetComposite().GetReady())
		}
		if diff := cmp.Diff([]any{"nova", "cinder"}, get(status(rsp), "unservedServices")); diff != "" {
			t.Errorf("status.unservedServices (-want +got):\n%s", diff)
		}
		c := condition(rsp, conditionServicesServed)
		want := "the cloud's service catalog has no endpoint for nova (compute: the c5c3 ControlPlane cannot deploy it (status.unsupportedServices)), cinder (block-storage or volumev3: the c5c3 ControlPlane cannot deploy it (status.unsupportedServices)): the cloud is not Ready until it serves every service the claim enables; their objects (aggregates, volume types, quotas) are composed once it does. A cloud meant to run without them disables them in spec.services"
		if c.GetStatus() != fnv1.Status_STATUS_CONDITION_FALSE || c.GetReason() != "NotInCatalog" || c.GetMessage() != want {
			t.Errorf("ServicesServed = %v %s: %q", c.GetStatus(), c.GetReason(), c.GetMessage())
		}
	})

	t.Run("a cloud that enables no compute is Ready on a catalog without it", func(t *testing.T) {
		w := ready()
		w.catalogRead("identity", "network", "image")
		rsp := run(t, w.request(teamA(func(s map[string]any) {
			s["services"] = map[string]any{"nova": false, "cinder": false, "neutron": true}
		})))
		mustNotFail(t, rsp)
		if got := get(status(rsp), "phase"); got != "Ready" {
			t.Errorf("phase = %v, want Ready: it serves what it enables", got)
		}
		if c := condition(rsp, conditionServicesServed); c.GetStatus() != fnv1.Status_STATUS_CONDITION_TRUE {
			t.Errorf("ServicesServed = %v: %s", c.GetStatus(), c.GetMessage())
		}
	})

	t.Run("a catalog with every service", func(t *testing.T) {
		w := ready()
		w.catalogRead("block-storage", "compute", "identity", "network")
		rsp := run(t, w.request(teamA()))
		for _, k := range []string{"aggregate-hv-pool-a", "compute-quota", "volume-type-st-pool-a", "volume-quota", "network-quota"} {
			if !slices.Contains(resourceNames(rsp), k) {
				t.Errorf("no %s", k)
			}
		}
		if c := condition(rsp, conditionServicesServed); c.GetStatus() != fnv1.Status_STATUS_CONDITION_TRUE {
			t.Errorf("ServicesServed = %v: %s", c.GetStatus(), c.GetMessage())
		}
	})

	t.Run("objects that exist are kept", func(t *testing.T) {
		w := ready()
		w.cloudReady() // every object exists
		w.catalogRead("identity")
		rsp := run(t, w.request(teamA()))
		for _, k := range []string{"aggregate-hv-pool-a", "compute-quota", "volume-type-st-pool-a", "volume-quota", "network-quota"} {
			if !slices.Contains(resourceNames(rsp), k) {
				t.Errorf("%s was dropped when the catalog stopped listing its service", k)
			}
		}
	})

	t.Run("before the catalog is read", func(t *testing.T) {
		w := ready()
		w.observed["provider-config"] = `{"apiVersion": "openstack.provider.c5c3.io/v1alpha1", "kind": "ProviderConfig", "metadata": {"name": "team-a-prod-7xk2p"}}`
		delete(w.observed, "network-quota")
		rsp := run(t, w.request(teamA()))
		if slices.Contains(resourceNames(rsp), "network-quota") {
			t.Error("composed a service's object before the catalog was read")
		}
		c := condition(rsp, conditionCloudReady)
		if c.GetStatus() == fnv1.Status_STATUS_CONDITION_TRUE || !strings.Contains(c.GetMessage(), "the provider has not read the cloud's service catalog yet (ProviderConfig team-a-prod-7xk2p, status.catalog)") {
			t.Errorf("CloudReady = %v: %s", c.GetStatus(), c.GetMessage())
		}
		if got := get(status(rsp), "phase"); got == "Ready" {
			t.Error("Ready before the catalog was read")
		}
	})
}

// TestCloudSaysWhyItsObjectsWait: an object in the cloud's own APIs that
// the provider cannot create (its Keystone unreachable, as the fault suite's
// TestFaultOpenStackUnreachable makes it) keeps the cloud from Ready, and
// the claim's CloudReady carries the provider's reason, cut to a bound; an
// object still being created says only that.
func TestCloudSaysWhyItsObjectsWait(t *testing.T) {
	failing := func(why string) string {
		b, _ := json.Marshal(map[string]any{"apiVersion": "keystone.provider.c5c3.io/v1alpha1", "kind": "Project", "metadata": map[string]any{"name": "project"},
			"status": map[string]any{"conditions": []any{
				map[string]any{"type": "Synced", "status": "False", "reason": "ReconcileError", "lastTransitionTime": "2026-11-22T08:05:00Z", "message": why},
			}}})
		return string(b)
	}
	unreachable := `cannot observe project team-a-prod-7xk2p: Get "https://keystone.team-a-prod-7xk2p.cloud.example/v3/projects/4f1c": dial tcp 10.0.0.7:443: connect: connection refused`
	for _, tc := range []struct {
		name, observed, want string
	}{
		{"the provider's reason", failing(unreachable), "Keystone project team-a-prod-7xk2p is Failed: " + unreachable},
		{"a long reason is cut", failing(strings.Repeat("é", 400)), "Keystone project team-a-prod-7xk2p is Failed: " + strings.Repeat("é", reasonLength) + "…"},
		{"no reason given", failing(""), "Keystone project team-a-prod-7xk2p is Failed"},
		{"being created", "", "Keystone project team-a-prod-7xk2p is Creating"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := allReady()
			if tc.observed == "" {
				delete(w.observed, "project")
			} else {
				w.observed["project"] = tc.observed
			}
			rsp := run(t, w.request(teamA()))
			mustNotFail(t, rsp)
			c := condition(rsp, conditionCloudReady)
			if c.GetStatus() == fnv1.Status_STATUS_CONDITION_TRUE {
				t.Fatalf("CloudReady is True with the project %s", tc.name)
			}
			parts := strings.Split(c.GetMessage(), "; ")
			if !slices.Contains(parts, tc.want) {
				t.Errorf("CloudReady says %q, want a part %q", c.GetMessage(), tc.want)
			}
			if got := get(status(rsp), "phase"); got == "Ready" {
				t.Error("the cloud is Ready while its project is not")
			}
		})
	}
}

// TestANewCloudWaitsForThePool: a new cloud records what it asks for on
// its usage of the pool, with the time it asked, and waits, saying so,
// until the pool has decided; once the pool gives it its share, the cloud
// records it and goes on. A cloud that holds nodes keeps them while the
// pool decides more.
func TestANewCloudWaitsForThePool(t *testing.T) {
	now := time.Date(2026, 11, 25, 3, 0, 0, 0, time.UTC)
	f := &Function{log: logging.NewNopLogger(), now: func() time.Time { return now }}
	runAt := func(req *fnv1.RunFunctionRequest) *fnv1.RunFunctionResponse {
		t.Helper()
		rsp, err := f.RunFunction(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		mustNotFail(t, rsp)
		return rsp
	}

	w := eu()
	w.undecided = true
	rsp := runAt(w.request(teamA()))
	rec := desired(t, rsp, "usage-hypervisor-hv-pool-a")
	if diff := cmp.Diff(map[string]any{"c5c3.io/cloud": "team-a/team-a-prod-7xk2p", "c5c3.io/asked-nodes": "20", "c5c3.io/allocated-nodes": "0", "c5c3.io/asked-since": "2026-11-25T03:00:00Z"},
		get(rec, "metadata", "annotations")); diff != "" {
		t.Errorf("the new cloud's record (-want +got):\n%s", diff)
	}
	if got := get(status(rsp), "phase"); got != "Pending" {
		t.Errorf("phase = %v, want Pending", got)
	}
	want := "hypervisor pool hv-pool-a has not given the cloud the 20 nodes it asks for yet (see the pool's Allocation condition)"
	if c := condition(rsp, conditionPoolsReady); c.GetStatus() == fnv1.Status_STATUS_CONDITION_TRUE || !strings.Contains(c.GetMessage(), want) {
		t.Errorf("PoolsReady = %v: %s\nwant it to say %q", c.GetStatus(), c.GetMessage(), want)
	}
	if slices.Contains(resourceNames(rsp), "namespace") {
		t.Error("the cloud goes on before the pool gave it nodes")
	}

	// A later run keeps the time of the request it recorded.
	now = now.Add(time.Minute)
	w.observed["usage-hypervisor-hv-pool-a"] = fntest.Edit(`{"apiVersion": "protection.crossplane.io/v1beta1", "kind": "ClusterUsage", "metadata": {"name": "u"}}`,
		func(m map[string]any) { fntest.Map(m, "metadata")["annotations"] = get(rec, "metadata", "annotations") })
	rsp = runAt(w.request(teamA()))
	if got := get(desired(t, rsp, "usage-hypervisor-hv-pool-a"), "metadata", "annotations", "c5c3.io/asked-since"); got != "2026-11-25T03:00:00Z" {
		t.Errorf("the request's time in a later run = %v, want the recorded 2026-11-25T03:00:00Z", got)
	}

	// The pool decided: the cloud has its share and goes on.
	w.undecided = false
	rsp = runAt(w.request(teamA()))
	if diff := cmp.Diff(map[string]any{"c5c3.io/cloud": "team-a/team-a-prod-7xk2p", "c5c3.io/asked-nodes": "20", "c5c3.io/allocated-nodes": "20"},
		get(desired(t, rsp, "usage-hypervisor-hv-pool-a"), "metadata", "annotations")); diff != "" {
		t.Errorf("the record once the pool gave the share (-want +got):\n%s", diff)
	}
	if got := get(status(rsp), "consumedPools", "hypervisor", 0, "allocatedNodes"); got != float64(20) {
		t.Errorf("allocated %v nodes, want 20", got)
	}
	if !slices.Contains(resourceNames(rsp), "namespace") {
		t.Errorf("the cloud with its share does not go on: %v", resourceNames(rsp))
	}

	// A running cloud that asks for more keeps what it has meanwhile.
	w.undecided = true
	w.hv[0] = fntest.Edit(w.hv[0], func(m map[string]any) {
		fntest.Map(m, "status")["shares"] = []any{map[string]any{"cloud": "team-a-prod-7xk2p", "claim": "team-a/team-a-prod-7xk2p", "asked": 10, "allocated": 10}}
	})
	held := cloudXR("team-a-prod-7xk2p", "team-a", "2026-11-10T00:00:00Z", spec(), "Ready", map[string]int{"hv-pool-a": 10})
	rsp = runAt(w.request(held))
	if got := get(status(rsp), "consumedPools", "hypervisor", 0, "allocatedNodes"); got != float64(10) {
		t.Errorf("a growing cloud has %v nodes while the pool decides, want the 10 it had", got)
	}
	if c := condition(rsp, conditionPoolsReady); c.GetStatus() != fnv1.Status_STATUS_CONDITION_TRUE || !strings.Contains(c.GetMessage(), "has not given the cloud the 20 nodes") {
		t.Errorf("PoolsReady of a growing cloud = %v: %s; want True, saying the pool has not given more yet", c.GetStatus(), c.GetMessage())
	}
}

// TestQuotaBounds: limits the services cannot hold are refused, naming the
// field, before anything multiplies them (bytes, MiB).
func TestQuotaBounds(t *testing.T) {
	for name, tc := range map[string]struct {
		mutate func(map[string]any)
		want   string
	}{
		"quotaGB whose bytes overflow": {func(s map[string]any) {
			s["storage"].(map[string]any)["ceph"].(map[string]any)["volumePool"].(map[string]any)["quotaGB"] = int64(1) << 40
		}, "spec.storage.ceph.volumePool.quotaGB (1099511627776) must be between 0 (unlimited in a dedicated storage pool, the default of the cloud's size in a shared one) and 8589934591"},
		"an object store's quotaGB whose bytes overflow": {func(s map[string]any) {
			s["storage"].(map[string]any)["ceph"].(map[string]any)["objectStore"].(map[string]any)["quotaGB"] = int64(1) << 40
		}, "spec.storage.ceph.objectStore.quotaGB (1099511627776) must be between 0 (unlimited in a dedicated storage pool, the default of the cloud's size in a shared one) and 8589934591"},
		"ramGB whose MiB Nova cannot hold": {func(s map[string]any) {
			s["quotas"] = map[string]any{"compute": map[string]any{"ramGB": int64(1) << 21}}
		}, "spec.quotas.compute.ramGB (2097152) must be -1 (unlimited) or between 0 and 2097151"},
		"ports beyond 2^31-1": {func(s map[string]any) {
			s["quotas"] = map[string]any{"network": map[string]any{"ports": int64(1) << 31}}
		}, "spec.quotas.network.ports (2147483648) must be -1 (unlimited) or between 0 and 2147483647"},
	} {
		t.Run(name, func(t *testing.T) {
			rsp := run(t, eu().request(teamA(tc.mutate)))
			if got := fatal(rsp); got != tc.want {
				t.Errorf("Fatal result:\n got %q\nwant %q", got, tc.want)
			}
			if n := resourceNames(rsp); len(n) != 0 {
				t.Errorf("composed %v", n)
			}
		})
	}
	rsp := run(t, eu().request(teamA(func(s map[string]any) {
		s["quotas"] = map[string]any{"compute": map[string]any{"ramGB": int64(2097151)}}
	})))
	mustNotFail(t, rsp)
}

// TestSharedAndDedicatedPools is the docs' multi-tenant scenario: team-a and
// team-b share hv-pool-a and st-pool-a, finance has its dedicated pools.
func TestSharedAndDedicatedPools(t *testing.T) {
	w := eu()
	w.clouds = []string{cloudXR("team-b-staging-1", "team-b", "2026-11-02T00:00:00Z",
		spec(func(s map[string]any) {
			setPools(s, map[string]any{"name": "hv-pool-a", "nodes": 5})
		}), "Ready", map[string]int{"hv-pool-a": 5})}

	rsp := run(t, w.request(teamA(func(s map[string]any) {
		setPools(s, map[string]any{"name": "hv-pool-a", "nodes": 45})
	})))
	mustNotFail(t, rsp)
	if got := get(status(rsp), "consumedPools", "hypervisor", 0, "allocatedNodes"); got != float64(45) {
		t.Errorf("team-a's allocation = %v, want the 45 team-b left", got)
	}

	fin := cloudXR("finance-prod-1", "finance", "2026-11-05T00:00:00Z", spec(func(s map[string]any) {
		setPools(s, map[string]any{"name": "hv-pool-fin"})
		s["storageClusters"] = []any{"st-pool-fin"}
	}), "", nil)
	rsp = run(t, w.request(fin))
	mustNotFail(t, rsp)
	if got := get(status(rsp), "consumedPools", "hypervisor", 0, "allocatedNodes"); got != float64(12) {
		t.Errorf("finance's allocation of its dedicated pool = %v, want all 12 nodes", got)
	}
	if got := get(desired(t, rsp, "ceph-st-pool-fin-volumes"), "spec", "providerConfigRef", "name"); got != "storage-st-pool-fin" {
		t.Errorf("finance's volumes pool is placed through %v, want storage-st-pool-fin", got)
	}
}

// TestTenantAccess: once the project exists in the cloud, the tenant gets a
// user of its own with the member role on the project and an application
// credential, which the provider publishes as a clouds.yaml straight into
// the claim's connection secret (the one the claim names, else
// <claim>-credentials); the user's password stays in the management cluster.
func TestTenantAccess(t *testing.T) {
	cases := map[string]struct {
		claim      []string
		wantSecret map[string]any
	}{
		"the claim names its connection secret": {claim: []string{claimOfTeamA("my-cloud")}, wantSecret: map[string]any{"namespace": "team-a", "name": "my-cloud"}},
		"the claim names none":                  {claim: []string{claimOfTeamA("")}, wantSecret: map[string]any{"namespace": "team-a", "name": "team-a-prod-7xk2p-credentials"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := allReady()
			w.claim = tc.claim
			rsp := run(t, w.request(cloudXR("team-a-prod-7xk2p", "team-a", "2026-11-10T00:00:00Z", spec(), "", map[string]int{"hv-pool-a": 20})))
			mustNotFail(t, rsp)
			user := desired(t, rsp, "tenant-user")
			if diff := cmp.Diff(map[string]any{"name": "team-a-prod-7xk2p-tenant", "description": "The tenant of team-a/team-a-prod-7xk2p"}, get(user, "spec", "forProvider")); diff != "" {
				t.Errorf("the tenant's User (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(map[string]any{"namespace": "crossplane-system", "name": "team-a-prod-7xk2p-tenant-user"}, get(user, "spec", "writeConnectionSecretToRef")); diff != "" {
				t.Errorf("the User's password goes to (-want +got):\n%s", diff)
			}
			grant := desired(t, rsp, "tenant-grant")
			if diff := cmp.Diff(map[string]any{"role": "member", "userIDRef": map[string]any{"name": "team-a-prod-7xk2p-tenant"}, "projectIDRef": map[string]any{"name": "team-a-prod-7xk2p"}},
				get(grant, "spec", "forProvider")); diff != "" {
				t.Errorf("the tenant's grant (-want +got):\n%s", diff)
			}
			cred := desired(t, rsp, "tenant-credential")
			if diff := cmp.Diff(tc.wantSecret, get(cred, "spec", "writeConnectionSecretToRef")); diff != "" {
				t.Errorf("the credential is published to (-want +got):\n%s", diff)
			}
			fp := get(cred, "spec", "forProvider")
			for path, want := range map[string]any{
				"roles": []any{"member"}, "userIDRef": map[string]any{"name": "team-a-prod-7xk2p-tenant"}, "projectIDRef": map[string]any{"name": "team-a-prod-7xk2p"},
				"passwordSecretRef": map[string]any{"namespace": "crossplane-system", "name": "team-a-prod-7xk2p-tenant-user", "key": "password"},
				"cloud":             map[string]any{"name": "team-a-prod-7xk2p", "region": "eu-de-1"},
			} {
				if diff := cmp.Diff(want, get(fp, path)); diff != "" {
					t.Errorf("spec.forProvider.%s (-want +got):\n%s", path, diff)
				}
			}
			// The API has no way to loosen a credential (the provider makes
			// every one restricted; TestIntegrationTenantCredential shows
			// Keystone refusing it a new credential or a trust): what the
			// function sets is a closed list, so a field added later is
			// seen here and reviewed.
			for k := range fp.(map[string]any) {
				if !slices.Contains([]string{"name", "description", "rotation", "roles", "userIDRef", "projectIDRef", "passwordSecretRef", "cloud"}, k) {
					t.Errorf("spec.forProvider.%s is set; review what it lets the tenant's credential do, and add it here", k)
				}
			}
		})
	}
}

// TestDefaultShares: clouds written as the C5C3 docs write them name their
// pools only; each gets the default share of its size, recorded like any
// other, and two such clouds never over-commit a pool between them.
func TestDefaultShares(t *testing.T) {
	docs := func(size string) func(map[string]any) {
		return func(s map[string]any) { s["size"] = size; setPools(s, "hv-pool-a", "hv-pool-b") }
	}
	allocated := func(rsp *fnv1.RunFunctionResponse) []any {
		var got []any
		for _, h := range get(status(rsp), "consumedPools", "hypervisor").([]any) {
			got = append(got, get(h, "allocatedNodes"))
		}
		return got
	}

	t.Run("each pool gives the size's share", func(t *testing.T) {
		w := eu()
		w.clouds = []string{cloudXR("customer-b-prod", "tenant-customer-b", "2026-11-02T00:00:00Z", spec(docs("xlarge")), "Ready",
			map[string]int{"hv-pool-a": 16, "hv-pool-b": 16})}
		rsp := run(t, w.request(teamA(docs("large"))))
		mustNotFail(t, rsp)
		if diff := cmp.Diff([]any{float64(8), float64(8)}, allocated(rsp)); diff != "" {
			t.Errorf("a large cloud's default shares of hv-pool-a and hv-pool-b (-want +got):\n%s", diff)
		}
	})

	t.Run("a recorded default share is kept", func(t *testing.T) {
		w := eu()
		xr := cloudXR("team-a-prod-x1", "team-a", "2026-11-10T00:00:00Z", spec(docs("large")), "Ready", map[string]int{"hv-pool-a": 3, "hv-pool-b": 3})
		rsp := run(t, w.request(xr))
		mustNotFail(t, rsp)
		if diff := cmp.Diff([]any{float64(3), float64(3)}, allocated(rsp)); diff != "" {
			t.Errorf("a cloud without shares keeps what it was given (-want +got):\n%s", diff)
		}
	})

	t.Run("two new clouds on a small pool: the older is served, the newer refused", func(t *testing.T) {
		w := eu()
		w.hv = []string{hvPool("hv-pool-a", "eu-de-1", 12, "Ready"), hvPool("hv-pool-b", "eu-de-1", 100, "Ready")}
		// Both have recorded their requests, the older first: the pool
		// serves the older.
		older := cloudXR("customer-a-prod", "tenant-customer-a", "2026-11-02T00:00:00Z", spec(docs("large")), "", nil)
		newer := cloudXR("customer-b-prod", "tenant-customer-b", "2026-11-03T00:00:00Z", spec(docs("large")), "", nil)
		w.clouds = []string{newer}
		rsp := run(t, w.request(older))
		mustNotFail(t, rsp)
		if diff := cmp.Diff([]any{float64(8), float64(8)}, allocated(rsp)); diff != "" {
			t.Errorf("the older cloud's shares (-want +got):\n%s", diff)
		}
		// hv-pool-b and st-pool-a have room and gave the newer cloud its
		// shares; refused by hv-pool-a, it gives them back and keeps its
		// place in hv-pool-a's queue.
		w.clouds = []string{older}
		want := "spec.hypervisorClusters[0]: hypervisor pool hv-pool-a would be over-committed: of its 12 nodes, 4 are free (8 nodes held by 1 other cloud), and the cloud asks for 8 (the default share of a large cloud: set spec.hypervisorShares to ask for fewer); until every pool has room for it, the cloud holds nothing of hypervisor pool hv-pool-b, storage pool st-pool-a"
		rsp = run(t, w.request(newer))
		if got := refusal(t, rsp); got != want {
			t.Errorf("the newer cloud:\n got %q\nwant %q", got, want)
		}
		if rec := get(desired(t, rsp, "usage-hypervisor-hv-pool-a"), "metadata", "annotations"); get(rec, "c5c3.io/asked-nodes") != "8" || get(rec, "c5c3.io/asked-since") == nil {
			t.Errorf("the newer cloud's record on hv-pool-a, which refused it: %v; want its request for 8 nodes kept, with its place", rec)
		}
		asksNothing(t, desired(t, rsp, "usage-hypervisor-hv-pool-b"), pool.Nodes)
		asksNothing(t, desired(t, rsp, "usage-storage-st-pool-a"), pool.Gigabytes)
	})

	t.Run("a default share is at most the pool", func(t *testing.T) {
		w := eu()
		w.hv = []string{hvPool("hv-pool-a", "eu-de-1", 5, "Ready"), hvPool("hv-pool-b", "eu-de-1", 100, "Ready")}
		rsp := run(t, w.request(teamA(docs("xlarge"))))
		mustNotFail(t, rsp)
		if diff := cmp.Diff([]any{float64(5), float64(16)}, allocated(rsp)); diff != "" {
			t.Errorf("an xlarge cloud's default shares of a 5-node and a 100-node pool (-want +got):\n%s", diff)
		}
	})
}

// allReady is a world where every stage of team-a's cloud is observed ready,
// placed in cp-eu-de-1 (its usage of it observed).
func allReady() world {
	w := eu()
	w.observed["usage-control-plane-cp-eu-de-1"] = usageObserved(nil)
	w.namespaceReady()
	w.storageReady()
	w.keyCopied()
	w.accessIssued()
	w.accessCopied()
	w.controlPlaneReady()
	w.adminReady()
	w.cloudReady()
	w.ovnReady()
	w.chassisRegistered(map[string]any{"name": "node-a", "gateway": true})
	w.gatewaysReady()
	return w
}

// manifestOf is the manifest an Object places.
func manifestOf(o map[string]any) map[string]any {
	m, _ := get(o, "spec", "forProvider", "manifest").(map[string]any)
	return m
}

// TestSpecFields checks the effect of every field of the cloud's spec and
// of the Composition's input on what is composed.
func TestSpecFields(t *testing.T) {
	cases := map[string]struct {
		mutate func(map[string]any)
		input  string
		check  func(t *testing.T, rsp *fnv1.RunFunctionResponse)
	}{
		"size large: replicas of the docs' size map": {
			check: func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
				cp := manifestOf(desired(t, rsp, "control-plane"))
				for path, want := range map[string]float64{"infrastructure.database.replicas": 3, "infrastructure.cache.replicas": 3,
					"services.keystone.replicas": 3, "services.glance.replicas": 5, "services.placement.replicas": 5, "services.horizon.replicas": 5} {
					var p []any
					for _, k := range strings.Split("spec."+path, ".") {
						p = append(p, k)
					}
					if got := get(cp, p...); got != want {
						t.Errorf("ControlPlane %s = %v, want %v", path, got, want)
					}
				}
			},
		},
		"size xlarge capped by the Composition at medium": {
			mutate: func(s map[string]any) { s["size"] = "xlarge" },
			input:  `{"apiVersion": "input.crossplane.c5c3.io/v1alpha1", "kind": "CloudSettings", "environment": "staging", "maxSize": "medium"}`,
			check: func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
				if got := get(manifestOf(desired(t, rsp, "control-plane")), "spec", "services", "keystone", "replicas"); got != float64(3) {
					t.Errorf("keystone replicas = %v, want medium's 3", got)
				}
				if got := get(desired(t, rsp, "compute-quota"), "spec", "forProvider", "cores"); got != float64(400) {
					t.Errorf("cores quota = %v, want medium's 400", got)
				}
			},
		},
		"openStackRelease and region reach the ControlPlane": {
			mutate: func(s map[string]any) { s["openStackRelease"] = "2026.1" },
			check: func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
				cp := manifestOf(desired(t, rsp, "control-plane"))
				if get(cp, "spec", "openStackRelease") != "2026.1" || get(cp, "spec", "region") != "eu-de-1" {
					t.Errorf("ControlPlane spec = %v", get(cp, "spec"))
				}
			},
		},
		"services: no Nova means no Placement, aggregates or compute quota; Barbican runs; Octavia is reported": {
			mutate: func(s map[string]any) {
				s["services"] = map[string]any{"nova": false, "neutron": true, "cinder": true, "glance": true, "horizon": false, "octavia": true, "manila": false, "barbican": true}
			},
			check: func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
				svcs, _ := get(manifestOf(desired(t, rsp, "control-plane")), "spec", "services").(map[string]any)
				if diff := cmp.Diff([]string{"barbican", "glance", "keystone"}, slices.Sorted(maps.Keys(svcs))); diff != "" {
					t.Errorf("ControlPlane services (-want +got):\n%s", diff)
				}
				for _, n := range []string{"aggregate-hv-pool-a", "compute-quota"} {
					if _, ok := rsp.GetDesired().GetResources()[n]; ok {
						t.Errorf("composed %s without Nova", n)
					}
				}
				if diff := cmp.Diff([]any{"neutron", "cinder", "octavia"}, get(status(rsp), "unsupportedServices")); diff != "" {
					t.Errorf("status.unsupportedServices (-want +got):\n%s", diff)
				}
			},
		},
		"services: no Cinder and no Neutron means no volume types and no volume or network quota": {
			mutate: func(s map[string]any) {
				s["services"] = map[string]any{"nova": true, "neutron": false, "cinder": false, "glance": true, "horizon": true}
			},
			check: func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
				for _, n := range []string{"volume-type-st-pool-a", "volume-quota", "network-quota"} {
					if _, ok := rsp.GetDesired().GetResources()[n]; ok {
						t.Errorf("composed %s", n)
					}
				}
			},
		},
		"cortex, tls, the external network and the MTU are reported, not emitted": {
			mutate: func(s map[string]any) {
				s["cortex"] = map[string]any{"enabled": true, "pipelines": []any{"nova"}}
				s["tls"] = map[string]any{"enabled": true, "issuerRef": "letsencrypt"}
				s["network"] = map[string]any{"externalNetwork": "public", "mtu": 9000}
			},
			check: func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
				if diff := cmp.Diff([]any{"spec.cortex", "spec.tls.issuerRef", "spec.network.externalNetwork", "spec.network.mtu"}, get(status(rsp), "unsupportedSettings")); diff != "" {
					t.Errorf("status.unsupportedSettings (-want +got):\n%s", diff)
				}
				if c := condition(rsp, conditionSupported); c.GetStatus() != fnv1.Status_STATUS_CONDITION_FALSE || c.GetReason() != "NotInControlPlane" {
					t.Errorf("Supported = %v %s", c.GetStatus(), c.GetReason())
				}
			},
		},
		"volume pool: replication, compression and quota": {
			mutate: func(s map[string]any) {
				get(s, "storage", "ceph").(map[string]any)["volumePool"] = map[string]any{"replication": 2, "compression": "force", "quotaGB": 5}
			},
			check: func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
				want := map[string]any{"name": "team-a-prod-7xk2p-st-pool-a-volumes", "size": float64(2), "compressionMode": "force", "quotaMaxBytes": float64(5 << 30), "application": "rbd", "dataPolicy": "Retain"}
				if diff := cmp.Diff(want, get(desired(t, rsp, "ceph-st-pool-a-volumes"), "spec", "forProvider")); diff != "" {
					t.Errorf("volumes pool (-want +got):\n%s", diff)
				}
			},
		},
		"no quota: in a shared pool, the default of the cloud's size": {
			mutate: func(s map[string]any) { get(s, "storage", "ceph", "volumePool").(map[string]any)["quotaGB"] = 0 },
			check: func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
				if got, want := get(desired(t, rsp, "ceph-st-pool-a-volumes"), "spec", "forProvider", "quotaMaxBytes"), float64(v1alpha1.DefaultVolumeQuotaGB[v1alpha1.SizeLarge]<<30); got != want {
					t.Errorf("quotaMaxBytes = %v, want %v (the default of a large cloud)", got, want)
				}
			},
		},
		"ephemeral pool off: no pool and no caps for it": {
			mutate: func(s map[string]any) { get(s, "storage", "ceph", "ephemeralPool").(map[string]any)["enabled"] = false },
			check: func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
				if _, ok := rsp.GetDesired().GetResources()["ceph-st-pool-a-ephemeral"]; ok {
					t.Error("composed the ephemeral pool")
				}
				want := map[string]any{"mon": "profile rbd", "mgr": "profile rbd pool=team-a-prod-7xk2p-st-pool-a-volumes, profile rbd pool=team-a-prod-7xk2p-st-pool-a-images", "osd": "profile rbd pool=team-a-prod-7xk2p-st-pool-a-volumes, profile rbd pool=team-a-prod-7xk2p-st-pool-a-images"}
				if diff := cmp.Diff(want, get(desired(t, rsp, "ceph-st-pool-a-client"), "spec", "forProvider", "caps")); diff != "" {
					t.Errorf("client caps (-want +got):\n%s", diff)
				}
			},
		},
		"filesystem and object store are Rook objects in the storage pool": {
			mutate: func(s map[string]any) {
				get(s, "storage", "ceph").(map[string]any)["filesystem"] = map[string]any{"enabled": true, "dataPoolReplication": 2, "metadataPoolReplication": 3}
				get(s, "storage", "ceph").(map[string]any)["objectStore"] = map[string]any{"enabled": true, "dataPoolReplication": 3}
			},
			check: func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
				fs := desired(t, rsp, "ceph-st-pool-a-filesystem")
				if get(fs, "spec", "providerConfigRef", "name") != "storage-st-pool-a" || get(manifestOf(fs), "kind") != "CephFilesystem" ||
					get(manifestOf(fs), "spec", "dataPools", 0, "replicated", "size") != float64(2) {
					t.Errorf("filesystem Object = %v", fs)
				}
				if get(manifestOf(desired(t, rsp, "ceph-st-pool-a-object-store")), "kind") != "CephObjectStore" {
					t.Error("no CephObjectStore")
				}
				// Under dataPolicy Retain (the default), Rook keeps their
				// pools when they go, as the provider keeps an RBD pool.
				for _, f := range []string{"preserveFilesystemOnDelete", "preservePoolsOnDelete"} {
					if got := get(manifestOf(fs), "spec", f); got != true {
						t.Errorf("CephFilesystem spec.%s = %v, want true (dataPolicy Retain)", f, got)
					}
				}
				if got := get(manifestOf(desired(t, rsp, "ceph-st-pool-a-object-store")), "spec", "preservePoolsOnDelete"); got != true {
					t.Errorf("CephObjectStore spec.preservePoolsOnDelete = %v, want true (dataPolicy Retain)", got)
				}
			},
		},
		"filesystem and object store of a cloud whose data the platform lets go": {
			mutate: func(s map[string]any) {
				s["dataPolicy"] = "Delete"
				get(s, "storage", "ceph").(map[string]any)["filesystem"] = map[string]any{"enabled": true, "dataPoolReplication": 2, "metadataPoolReplication": 3}
				get(s, "storage", "ceph").(map[string]any)["objectStore"] = map[string]any{"enabled": true, "dataPoolReplication": 3}
			},
			check: func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
				fs := manifestOf(desired(t, rsp, "ceph-st-pool-a-filesystem"))
				os := manifestOf(desired(t, rsp, "ceph-st-pool-a-object-store"))
				for what, got := range map[string]any{
					"CephFilesystem spec.preserveFilesystemOnDelete": get(fs, "spec", "preserveFilesystemOnDelete"),
					"CephFilesystem spec.preservePoolsOnDelete":      get(fs, "spec", "preservePoolsOnDelete"),
					"CephObjectStore spec.preservePoolsOnDelete":     get(os, "spec", "preservePoolsOnDelete"),
				} {
					if got != false {
						t.Errorf("%s = %v, want false (dataPolicy Delete)", what, got)
					}
				}
			},
		},
		"every storage pool gets the tenant's pools, client, key and volume type": {
			mutate: func(s map[string]any) { s["storageClusters"] = []any{"st-pool-a", "st-pool-b"} },
			check: func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
				for _, n := range []string{"ceph-st-pool-b-volumes", "ceph-st-pool-b-images", "ceph-st-pool-b-ephemeral", "ceph-st-pool-b-client", "volume-type-st-pool-b"} {
					desired(t, rsp, n)
				}
				if got := get(desired(t, rsp, "volume-type-st-pool-b"), "spec", "forProvider", "backendName"); got != "ceph-st-pool-b" {
					t.Errorf("st-pool-b's volume type backend = %v", got)
				}
				if got := len(get(status(rsp), "cephResources").([]any)); got != 2 {
					t.Errorf("status.cephResources has %d entries, want 2", got)
				}
			},
		},
		"quotas override the preset field by field": {
			mutate: func(s map[string]any) {
				s["quotas"] = map[string]any{"compute": map[string]any{"cores": 7, "ramGB": -1}, "network": map[string]any{"floatingIPs": 3}}
			},
			check: func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
				want := map[string]any{"projectIDRef": map[string]any{"name": "team-a-prod-7xk2p"}, "cores": float64(7), "ramMB": float64(-1), "instances": float64(500)}
				if diff := cmp.Diff(want, get(desired(t, rsp, "compute-quota"), "spec", "forProvider")); diff != "" {
					t.Errorf("compute quota (-want +got):\n%s", diff)
				}
				if got := get(desired(t, rsp, "network-quota"), "spec", "forProvider", "floatingIPs"); got != float64(3) {
					t.Errorf("floating IP quota = %v", got)
				}
			},
		},
		"hypervisor pools: an aggregate (named after the cloud) and availability zone (the pool) each, for the cloud's project": {
			mutate: func(s map[string]any) {
				setPools(s, map[string]any{"name": "hv-pool-a", "nodes": 20}, map[string]any{"name": "hv-pool-b", "nodes": 7})
			},
			check: func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
				want := map[string]any{"name": "team-a-prod-7xk2p-hv-pool-b", "availabilityZone": "hv-pool-b",
					"metadata":           map[string]any{"c5c3.io_pool": "hv-pool-b", "c5c3.io_allocated_nodes": "7"},
					"filterTenantIDRefs": []any{map[string]any{"name": "team-a-prod-7xk2p"}}}
				if diff := cmp.Diff(want, get(desired(t, rsp, "aggregate-hv-pool-b"), "spec", "forProvider")); diff != "" {
					t.Errorf("hv-pool-b's aggregate (-want +got):\n%s", diff)
				}
				if got := get(desired(t, rsp, "project"), "spec", "forProvider", "name"); got != "team-a-prod-7xk2p" {
					t.Errorf("project name = %v, want the cloud's name", got)
				}
			},
		},
		"controlPlaneCluster places everything through its ProviderConfig": {
			mutate: func(s map[string]any) { s["controlPlaneCluster"] = "cp-eu-de-1-b" },
			check: func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
				for _, n := range []string{"namespace", "control-plane", "admin-credential", "ceph-st-pool-a-client-key"} {
					if got := get(desired(t, rsp, n), "spec", "providerConfigRef", "name"); got != "controlplane-cp-eu-de-1-b" {
						t.Errorf("%s is placed through %v", n, got)
					}
				}
			},
		},
		"endpointDomain sets the public endpoints": {
			check: func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
				if got := get(manifestOf(desired(t, rsp, "control-plane")), "spec", "services", "keystone", "publicEndpoint"); got != "https://keystone.team-a-prod-7xk2p.cloud.example" {
					t.Errorf("keystone publicEndpoint = %v", got)
				}
				// The provider logs in there only, whatever the control
				// plane's clouds.yaml says (#52 §14).
				if got := get(desired(t, rsp, "provider-config"), "spec", "authURL"); got != "https://keystone.team-a-prod-7xk2p.cloud.example/v3" {
					t.Errorf("the ProviderConfig's authURL = %v, want the composed Keystone endpoint", got)
				}
			},
		},
		"without endpointDomain the ProviderConfig reads the clouds.yaml's auth_url": {
			input: `{"apiVersion": "input.crossplane.c5c3.io/v1alpha1", "kind": "CloudSettings", "environment": "production"}`,
			check: func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
				if got := get(desired(t, rsp, "provider-config"), "spec", "authURL"); got != nil {
					t.Errorf("the ProviderConfig's authURL = %v, want none", got)
				}
			},
		},
		"secretNamespace keeps the credentials": {
			input: `{"apiVersion": "input.crossplane.c5c3.io/v1alpha1", "kind": "CloudSettings", "environment": "production", "secretNamespace": "cloud-secrets"}`,
			check: func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
				if got := get(desired(t, rsp, "ceph-st-pool-a-client"), "spec", "writeConnectionSecretToRef", "namespace"); got != "cloud-secrets" {
					t.Errorf("client key namespace = %v", got)
				}
				if got := get(desired(t, rsp, "provider-config"), "spec", "credentials", "secretRef", "namespace"); got != "cloud-secrets" {
					t.Errorf("ProviderConfig credentials namespace = %v", got)
				}
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := allReady()
			if tc.input != "" {
				w.input = tc.input
			}
			w.cp = append(w.cp, cpCluster("cp-eu-de-1-b", "eu-de-1", "Ready"))
			var mutate []func(map[string]any)
			if tc.mutate != nil {
				mutate = append(mutate, tc.mutate)
			}
			rsp := run(t, w.request(teamA(mutate...)))
			mustNotFail(t, rsp)
			tc.check(t, rsp)
		})
	}
}

// TestKeysNeverPassThrough: the CephX key and the admin clouds.yaml reach
// the function only as observed connection details, and nothing of them
// appears in what it answers (status, resources, conditions, results).
func TestKeysNeverPassThrough(t *testing.T) {
	w := allReady()
	req := w.request(teamA())
	const key, cloudsYAML = "AQBsecretkey==", "clouds: {admin: {auth: {password: s3cret}}}"
	req.Observed.Resources["ceph-st-pool-a-client"].ConnectionDetails = map[string][]byte{"key": []byte(key)}
	req.Observed.Resources["admin-credential"].ConnectionDetails = map[string][]byte{"clouds.yaml": []byte(cloudsYAML)}
	rsp := run(t, req)
	mustNotFail(t, rsp)
	b, err := protojson.Marshal(rsp)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{key, "s3cret"} {
		if strings.Contains(string(b), secret) {
			t.Errorf("the response carries %q", secret)
		}
	}
	// The key is copied by the provider's SecretCopy, which names the
	// connection secret and the keys, never a value.
	copied := desired(t, rsp, "ceph-st-pool-a-client-key")
	if got := copied["kind"]; got != "SecretCopy" {
		t.Fatalf("the key is copied by a %s, want a SecretCopy", got)
	}
	want := map[string]any{
		"source":   map[string]any{"namespace": "crossplane-system", "name": "team-a-prod-7xk2p-st-pool-a-ceph-client"},
		"keys":     []any{map[string]any{"from": "key"}, map[string]any{"from": "mon_host"}},
		"literals": map[string]any{"entity": "client.openstack-team-a-prod-7xk2p-st-pool-a"},
		"target": map[string]any{"namespace": "openstack-team-a-prod-7xk2p", "name": "ceph-client-st-pool-a",
			"labels": map[string]any{"c5c3.io/openstack-cluster": "team-a-prod-7xk2p", "c5c3.io/tenant": "team-a"}},
	}
	if diff := cmp.Diff(want, get(copied, "spec", "forProvider")); diff != "" {
		t.Errorf("the key's SecretCopy (-want +got):\n%s", diff)
	}
}

// TestDeletionIsOrdered: the ControlPlane Object is in use by the
// ProviderConfigs the cloud's objects are managed through, and the
// namespace Object by the ControlPlane, so that when the cloud goes its
// Keystone, Nova, Cinder and OVN objects are deleted while its APIs still
// serve, then its ControlPlane, then its namespace.
func TestDeletionIsOrdered(t *testing.T) {
	rsp := run(t, allReady().request(cloudXR("team-a-prod-7xk2p", "team-a", "2026-11-10T00:00:00Z", spec(), "Ready", map[string]int{"hv-pool-a": 20})))
	mustNotFail(t, rsp)
	ref := func(apiVersion, kind, name string) map[string]any {
		return map[string]any{"apiVersion": apiVersion, "kind": kind, "resourceRef": map[string]any{"name": name}}
	}
	controlPlane := ref("kubernetes.crossplane.io/v1alpha2", "Object", "team-a-prod-7xk2p-control-plane")
	for name, want := range map[string][2]map[string]any{
		"usage-order-cloud":     {controlPlane, ref("openstack.provider.c5c3.io/v1alpha1", "ProviderConfig", "team-a-prod-7xk2p")},
		"usage-order-network":   {controlPlane, ref("ovn.provider.c5c3.io/v1alpha1", "ProviderConfig", "team-a-prod-7xk2p")},
		"usage-order-namespace": {ref("kubernetes.crossplane.io/v1alpha2", "Object", "team-a-prod-7xk2p-namespace"), controlPlane},
	} {
		u := desired(t, rsp, name)
		if diff := cmp.Diff(want, [2]map[string]any{get(u, "spec", "of").(map[string]any), get(u, "spec", "by").(map[string]any)}); diff != "" {
			t.Errorf("%s: of, by (-want +got):\n%s", name, diff)
		}
		if get(u, "spec", "replayDeletion") != true || get(u, "kind") != "ClusterUsage" {
			t.Errorf("%s: %v, want a ClusterUsage that replays the deletion", name, u)
		}
	}
}

// TestAdminCA: the CA of the cloud's endpoints (key cacert of the admin
// credential, as K-ORC reads it) is copied beside the clouds.yaml, and the
// cloud's ProviderConfig trusts it; a Composition whose clouds' endpoints
// use a CA the system trusts says adminCACertKey: "" and neither happens.
func TestAdminCA(t *testing.T) {
	caRef := map[string]any{"namespace": "crossplane-system", "name": "team-a-prod-7xk2p-openstack-admin", "key": "cacert"}
	caDetail := map[string]any{"apiVersion": "v1", "kind": "Secret", "namespace": "openstack-team-a-prod-7xk2p", "name": "k-orc-clouds-yaml",
		"fieldPath": "data[cacert]", "toConnectionSecretKey": "cacert"}
	cases := map[string]struct {
		input      string
		wantRef    any
		wantDetail bool
	}{
		"by default":        {input: eu().input, wantRef: caRef, wantDetail: true},
		"a key of its own":  {input: strings.Replace(eu().input, `"environment"`, `"adminCACertKey": "ca.crt", "environment"`, 1), wantRef: caRef, wantDetail: true},
		"none: a public CA": {input: strings.Replace(eu().input, `"environment"`, `"adminCACertKey": "", "environment"`, 1)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := allReady()
			w.input = tc.input
			rsp := run(t, w.request(teamA()))
			mustNotFail(t, rsp)
			if diff := cmp.Diff(tc.wantRef, get(desired(t, rsp, "provider-config"), "spec", "caBundleSecretRef")); diff != "" {
				t.Errorf("the ProviderConfig's caBundleSecretRef (-want +got):\n%s", diff)
			}
			details, _ := get(desired(t, rsp, "admin-credential"), "spec", "connectionDetails").([]any)
			var got map[string]any
			for _, d := range details {
				if d.(map[string]any)["toConnectionSecretKey"] == "cacert" {
					got = d.(map[string]any)
				}
			}
			want := map[string]any(nil)
			if tc.wantDetail {
				want = caDetail
				if strings.Contains(tc.input, "ca.crt") {
					want = maps.Clone(caDetail)
					want["fieldPath"] = "data[ca.crt]"
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("the admin credential's CA detail (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStorageShares: a cloud takes of a shared storage pool only what the
// pool gave it. A new cloud waits for its share (composing nothing but its
// records); a running cloud whose pool has not decided yet keeps its volume
// pool as it is; the Composition's cap bounds the default quota.
func TestStorageShares(t *testing.T) {
	undecided := func(w *world) {
		w.st[0] = fntest.Edit(w.st[0], func(m map[string]any) {
			st := fntest.Map(m, "status")
			st["shareableGB"], st["shares"] = 102400, []any{}
		})
	}

	t.Run("a new cloud waits for its share", func(t *testing.T) {
		w := eu()
		undecided(&w)
		rsp := run(t, w.request(teamA()))
		if n := resourceNames(rsp); !slices.Equal(n, []string{"usage-control-plane-cp-eu-de-1", "usage-hypervisor-hv-pool-a", "usage-storage-st-pool-a"}) {
			t.Errorf("composed %v, want only its usages", n)
		}
		if got := get(desired(t, rsp, "usage-storage-st-pool-a"), "metadata", "annotations", "c5c3.io/asked-gb"); got != "370" {
			t.Errorf("the record asks for %v GB, want 370 (volumes 100 GB × 3 replicas, images 10 GB × 3, ephemeral 20 GB × 2)", got)
		}
		if c := condition(rsp, conditionPoolsReady); c.GetStatus() != fnv1.Status_STATUS_CONDITION_FALSE || !strings.Contains(c.GetMessage(), "storage pool st-pool-a has not given the cloud the 370 GB it asks for yet") {
			t.Errorf("PoolsReady = %v: %s", c.GetStatus(), c.GetMessage())
		}
	})

	t.Run("a running cloud keeps its volume pool while the pool decides", func(t *testing.T) {
		w := eu()
		undecided(&w)
		w.observed["ceph-st-pool-a-volumes"] = `{"apiVersion": "ceph.provider.c5c3.io/v1alpha1", "kind": "Pool", "metadata": {"name": "team-a-prod-7xk2p-st-pool-a-volumes"},
		  "spec": {"forProvider": {"name": "team-a-prod-7xk2p-st-pool-a-volumes", "size": 3, "quotaMaxBytes": 53687091200}}}`
		rsp := run(t, w.request(teamA()))
		if got := get(desired(t, rsp, "ceph-st-pool-a-volumes"), "spec", "forProvider", "quotaMaxBytes"); got != float64(50<<30) {
			t.Errorf("quotaMaxBytes = %v while the pool decides, want the 50 GiB it had", got)
		}
		if got := get(desired(t, rsp, "usage-storage-st-pool-a"), "metadata", "annotations", "c5c3.io/allocated-gb"); got != "150" {
			t.Errorf("the record says the cloud has %v GB, want the 150 its volume pool takes (50 GB × 3)", got)
		}
	})

	t.Run("more replicas wait for the share they take", func(t *testing.T) {
		// team-a-prod holds 300 GB of st-pool-a (100 GB × 3, its volume
		// pool alone as before quotas on its other pools) and now asks for
		// 4 replicas: 400 GB, and 70 for its image and ephemeral pools.
		granted := func(gb int) func(*world) {
			return func(w *world) {
				w.st[0] = fntest.Edit(w.st[0], func(m map[string]any) {
					st := fntest.Map(m, "status")
					st["shareableGB"], st["allocatedGB"], st["shares"] = 102400, gb, []any{
						map[string]any{"cloud": "team-a-prod-7xk2p", "claim": "team-a/team-a-prod-7xk2p", "askedGB": 470, "allocatedGB": gb},
					}
				})
				w.observed["ceph-st-pool-a-volumes"] = `{"apiVersion": "ceph.provider.c5c3.io/v1alpha1", "kind": "Pool", "metadata": {"name": "team-a-prod-7xk2p-st-pool-a-volumes"},
				  "spec": {"forProvider": {"name": "team-a-prod-7xk2p-st-pool-a-volumes", "size": 3, "quotaMaxBytes": 107374182400}}}`
			}
		}
		four := teamA(func(s map[string]any) { get(s, "storage", "ceph", "volumePool").(map[string]any)["replication"] = 4 })
		for _, tc := range []struct {
			gb       int
			size     float64
			quotaGiB float64
		}{
			{300, 3, 100}, // the share of 3 replicas: they stay, and so does the quota
			{470, 4, 100}, // granted: 4 replicas of the same quota
		} {
			w := eu()
			granted(tc.gb)(&w)
			rsp := run(t, w.request(four))
			vol := desired(t, rsp, "ceph-st-pool-a-volumes")
			if got := get(vol, "spec", "forProvider", "size"); got != tc.size {
				t.Errorf("holding %d GB of the 470 asked: the volume pool's size is %v, want %v", tc.gb, got, tc.size)
			}
			if got := get(vol, "spec", "forProvider", "quotaMaxBytes"); got != tc.quotaGiB*(1<<30) {
				t.Errorf("holding %d GB of the 470 asked: quotaMaxBytes %v, want %v GiB", tc.gb, got, tc.quotaGiB)
			}
		}
	})

	t.Run("more replicas wait while the pool decides too", func(t *testing.T) {
		// A volume pool of 3 replicas (100 GiB) that the pool has no share
		// of in its status yet: it takes 300 GB, not the 400 the claim's 4
		// replicas would, and keeps its 3 until the pool gives 400.
		w := eu()
		undecided(&w)
		w.observed["ceph-st-pool-a-volumes"] = `{"apiVersion": "ceph.provider.c5c3.io/v1alpha1", "kind": "Pool", "metadata": {"name": "team-a-prod-7xk2p-st-pool-a-volumes"},
		  "spec": {"forProvider": {"name": "team-a-prod-7xk2p-st-pool-a-volumes", "size": 3, "quotaMaxBytes": 107374182400}}}`
		rsp := run(t, w.request(teamA(func(s map[string]any) { get(s, "storage", "ceph", "volumePool").(map[string]any)["replication"] = 4 })))
		if got := get(desired(t, rsp, "ceph-st-pool-a-volumes"), "spec", "forProvider", "size"); got != float64(3) {
			t.Errorf("the volume pool's size is %v while the pool decides, want the 3 it has", got)
		}
		if got := get(desired(t, rsp, "usage-storage-st-pool-a"), "metadata", "annotations", "c5c3.io/allocated-gb"); got != "300" {
			t.Errorf("the record says the cloud has %v GB, want the 300 its volume pool takes (100 GB × 3)", got)
		}
	})

	t.Run("the Composition's cap bounds the default quota", func(t *testing.T) {
		w := eu()
		w.input = `{"apiVersion": "input.crossplane.c5c3.io/v1alpha1", "kind": "CloudSettings", "environment": "staging", "maxQuotas": {"volumePoolGB": 50}}`
		rsp := run(t, w.request(teamA(func(s map[string]any) { get(s, "storage", "ceph", "volumePool").(map[string]any)["quotaGB"] = 0 })))
		if got := get(desired(t, rsp, "ceph-st-pool-a-volumes"), "spec", "forProvider", "quotaMaxBytes"); got != float64(50<<30) {
			t.Errorf("quotaMaxBytes = %v, want the cap's 50 GiB (the default of a large cloud is %d GB)", got, v1alpha1.DefaultVolumeQuotaGB[v1alpha1.SizeLarge])
		}
	})
}

// TestTheDocsGroup composes the cloud the C5C3 docs write, apiVersion
// c5c3.io/v1alpha1, as the crossplane.c5c3.io one: its claim is asked for
// and the pools' usages name it in its own group.
func TestTheDocsGroup(t *testing.T) {
	docs := func(xr string) string {
		return fntest.Edit(xr, func(m map[string]any) { m["apiVersion"] = "c5c3.io/v1alpha1" })
	}
	w := eu()
	w.claim = []string{docs(claimOfTeamA("team-a-clouds"))}
	req := w.request(docs(teamA()))
	if got := req.GetRequiredResources()["claim"].GetItems(); len(got) != 1 {
		t.Fatalf("the function asked for no c5c3.io claim, or Crossplane supplied none: %v", got)
	}
	rsp := run(t, req)
	mustNotFail(t, rsp)
	var usages int
	for name, r := range rsp.GetDesired().GetResources() {
		if !strings.HasPrefix(name, usagePrefix) {
			continue
		}
		usages++
		if by := get(r.GetResource().AsMap(), "spec", "by", "apiVersion"); by != "c5c3.io/v1alpha1" {
			t.Errorf("%s: spec.by.apiVersion %v, want c5c3.io/v1alpha1", name, by)
		}
	}
	if usages == 0 {
		t.Errorf("no ClusterUsage of a pool among %v", resourceNames(rsp))
	}

	rsp = run(t, w.request(fntest.Edit(teamA(), func(m map[string]any) { m["apiVersion"] = "example.org/v1" })))
	if want := `apiVersion "example.org/v1": this function composes XOpenStackClusters of crossplane.c5c3.io/v1alpha1 or c5c3.io/v1alpha1`; fatal(rsp) != want {
		t.Errorf("a composite of another group: got %q, want %q", fatal(rsp), want)
	}
}

// TestAggregateHostsAreTheNamedNodes: a cloud's Nova aggregate of a pool
// holds the nodes the pool named for it (status.shares[].nodes); while the
// pool names none, the aggregate's hosts are left to the hypervisor
// operator.
func TestAggregateHostsAreTheNamedNodes(t *testing.T) {
	hosts := func(w world) any {
		rsp := run(t, w.request(teamA()))
		mustNotFail(t, rsp)
		return get(desired(t, rsp, "aggregate-hv-pool-a"), "spec", "forProvider", "hosts")
	}
	w := allReady()
	if got := hosts(w); got != nil {
		t.Errorf("hosts %v while the pool has named no node, want none (the operator's)", got)
	}
	w.named = map[string]map[string][]string{"hv-pool-a": {"team-a-prod-7xk2p": {"node-2", "node-1"}, "team-b-staging-1": {"node-3"}}}
	if diff := cmp.Diff([]any{"node-1", "node-2"}, hosts(w)); diff != "" {
		t.Errorf("the aggregate's hosts (-want +got):\n%s", diff)
	}

	// A node the share no longer holds but that runs the cloud's
	// instances stays a host, and the tenant reads why on the claim.
	w.draining = map[string]map[string][]string{"hv-pool-a": {"team-a-prod-7xk2p": {"node-9"}}}
	if diff := cmp.Diff([]any{"node-1", "node-2", "node-9"}, hosts(w)); diff != "" {
		t.Errorf("the aggregate's hosts with a draining node (-want +got):\n%s", diff)
	}
	rsp := run(t, w.request(teamA()))
	c := condition(rsp, conditionPoolsReady)
	if want := "node-9 still run its instances (2 on the pool's nodes it holds) and leave the cloud once they are empty (migrate or delete those instances)"; !strings.Contains(c.GetMessage(), want) || c.GetTarget() != fnv1.Target_TARGET_COMPOSITE_AND_CLAIM {
		t.Errorf("PoolsReady on the claim says %q (target %v), want it to name the draining node: %q", c.GetMessage(), c.GetTarget(), want)
	}
}

// TestComputeAvailable: the claim says whether the nodes its cloud holds
// serve. Nothing before the pool names them; True naming how many serve
// in each pool; False naming the node the pool's agents report out of
// service with the cloud's instances on it, which PoolsReady then does not
// call a shrunk share. The cloud stays Ready either way.
func TestComputeAvailable(t *testing.T) {
	w := allReady()
	rsp := run(t, w.request(teamA()))
	if c := condition(rsp, conditionComputeAvailable); c != nil {
		t.Errorf("ComputeAvailable %v (%s) before the pool names the cloud's nodes, want none", c.GetStatus(), c.GetMessage())
	}

	w.named = map[string]map[string][]string{"hv-pool-a": {"team-a-prod-7xk2p": {"node-1", "node-2"}}}
	rsp = run(t, w.request(teamA()))
	c := condition(rsp, conditionComputeAvailable)
	if c.GetStatus() != fnv1.Status_STATUS_CONDITION_TRUE || c.GetMessage() != "every node the cloud holds is in service: hv-pool-a 2" || c.GetTarget() != fnv1.Target_TARGET_COMPOSITE_AND_CLAIM {
		t.Errorf("ComputeAvailable = %v %q (target %v), want True naming 2 nodes of hv-pool-a on the claim", c.GetStatus(), c.GetMessage(), c.GetTarget())
	}

	// node-1 lost with the cloud's instances: the pool keeps it draining,
	// out of service, and names node-3 in its place.
	w.named = map[string]map[string][]string{"hv-pool-a": {"team-a-prod-7xk2p": {"node-2", "node-3"}}}
	w.draining = map[string]map[string][]string{"hv-pool-a": {"team-a-prod-7xk2p": {"node-1"}}}
	w.outOfService = map[string]map[string][]string{"hv-pool-a": {"team-a-prod-7xk2p": {"node-1"}}}
	rsp = run(t, w.request(teamA()))
	mustNotFail(t, rsp)
	c = condition(rsp, conditionComputeAvailable)
	want := "hypervisor pool hv-pool-a: node(s) node-1 of this cloud are out of service with its instances on them (the pool's AgentsReporting says why); they stay the cloud's until those instances are gone, and a free node of the pool takes their place in its share"
	if c.GetStatus() != fnv1.Status_STATUS_CONDITION_FALSE || c.GetReason() != "OutOfService" || c.GetMessage() != want {
		t.Errorf("ComputeAvailable = %v %s %q, want False OutOfService %q", c.GetStatus(), c.GetReason(), c.GetMessage(), want)
	}
	if m := condition(rsp, conditionPoolsReady).GetMessage(); strings.Contains(m, "node-1") {
		t.Errorf("PoolsReady calls the lost node-1 a node of a shrunk share: %s", m)
	}
	if got := get(status(rsp), "phase"); got != "Ready" {
		t.Errorf("phase %v with a node out of service, want Ready: the cloud's other nodes serve", got)
	}

	// The pool's agents cannot be read now: whether the nodes serve is
	// unknown (the out-of-service node is from the last report).
	w.outOfService = nil
	w.hv[0] = fntest.Edit(w.hv[0], func(m map[string]any) {
		fntest.Map(m, "status")["unreachable"] = "HypervisorInventory hypervisor-hv-pool-a cannot read the pool's Hypervisors now: connection refused"
	})
	rsp = run(t, w.request(teamA()))
	c = condition(rsp, conditionComputeAvailable)
	want = "whether the cloud's nodes in these hypervisor pools are in service is unknown while they cannot be read (each keeps the nodes it had): hypervisor pool hv-pool-a: HypervisorInventory hypervisor-hv-pool-a cannot read the pool's Hypervisors now: connection refused"
	if c.GetStatus() != fnv1.Status_STATUS_CONDITION_UNKNOWN || c.GetReason() != "Unreachable" || c.GetMessage() != want {
		t.Errorf("ComputeAvailable = %v %s %q, want Unknown Unreachable %q", c.GetStatus(), c.GetReason(), c.GetMessage(), want)
	}
	if diff := cmp.Diff([]any{"node-1", "node-2", "node-3"}, get(desired(t, rsp, "aggregate-hv-pool-a"), "spec", "forProvider", "hosts")); diff != "" {
		t.Errorf("the aggregate's hosts (-want +got):\n%s", diff)
	}
}

// usageObserved is the cloud's observed usage of a pool, with its record.
func usageObserved(record map[string]any) string {
	return fntest.Edit(`{"apiVersion": "protection.crossplane.io/v1beta1", "kind": "ClusterUsage", "metadata": {"name": "u"}}`,
		func(m map[string]any) { fntest.Map(m, "metadata")["annotations"] = record })
}

// TestLeavingStoragePool: a storage pool removed from the claim while the
// cloud's Ceph pools there hold data stays the cloud's — every object of it
// composed as before, asking for no more — and the claim says which pool
// holds what and what to do; once they are empty, or when the platform team
// set spec.dataPolicy: Delete, it goes.
func TestLeavingStoragePool(t *testing.T) {
	onlyB := func(s map[string]any) { s["storageClusters"] = []any{"st-pool-b"} }
	world := func(objects int) world {
		w := allReady()
		w.observed["usage-storage-st-pool-a"] = usageObserved(map[string]any{"c5c3.io/cloud": "team-a/prod", "c5c3.io/asked-gb": "300", "c5c3.io/allocated-gb": "300"})
		w.observed["ceph-st-pool-a-volumes"] = readyManaged(ceph, "Pool", "team-a-prod-7xk2p-st-pool-a-volumes",
			map[string]any{"usedBytes": 1 << 30, "dataObjects": objects, "images": min(objects, 1)})
		w.observed["ceph-st-pool-a-volumes"] = fntest.Edit(w.observed["ceph-st-pool-a-volumes"], func(m map[string]any) {
			m["spec"] = map[string]any{"forProvider": map[string]any{"name": "team-a-prod-7xk2p-st-pool-a-volumes", "size": 3, "quotaMaxBytes": 100 << 30}}
		})
		return w
	}
	held := []string{"ceph-st-pool-a-client", "ceph-st-pool-a-client-key", "ceph-st-pool-a-ephemeral", "ceph-st-pool-a-images", "ceph-st-pool-a-volumes", "usage-storage-st-pool-a", "volume-type-st-pool-a"}

	t.Run("held while its Ceph pool holds an image", func(t *testing.T) {
		rsp := run(t, world(3).request(teamA(onlyB)))
		mustNotFail(t, rsp)
		names := resourceNames(rsp)
		for _, n := range held {
			if !slices.Contains(names, n) {
				t.Errorf("%s is not composed while st-pool-a holds the cloud's data; composed %v", n, names)
			}
		}
		if got := get(desired(t, rsp, "usage-storage-st-pool-a"), "metadata", "annotations"); got.(map[string]any)["c5c3.io/asked-gb"] != "300" {
			t.Errorf("the record of the leaving pool says %v, want it to ask for what it holds (300 GB)", got)
		}
		if got := get(desired(t, rsp, "ceph-st-pool-a-volumes"), "spec", "forProvider", "quotaMaxBytes"); got != float64(100<<30) {
			t.Errorf("the leaving volume pool's quota is %v, want the 100 GiB it had", got)
		}
		c := condition(rsp, conditionPoolsReady)
		want := "storage pool st-pool-a, removed from spec.storageClusters, stays the cloud's: Ceph pool team-a-prod-7xk2p-st-pool-a-volumes holds 1 RBD image(s) in 3 object(s): " +
			"delete or migrate the cloud's volumes, snapshots and images there"
		if !strings.Contains(c.GetMessage(), want) || c.GetTarget() != fnv1.Target_TARGET_COMPOSITE_AND_CLAIM {
			t.Errorf("PoolsReady on the claim says %q (target %v), want it to say %q", c.GetMessage(), c.GetTarget(), want)
		}
		removing, _ := get(status(rsp), "consumedPools", "storage", 1, "removing").(string)
		if get(status(rsp), "consumedPools", "storage", 1, "name") != "st-pool-a" || !strings.HasPrefix(removing, "Ceph pool team-a-prod-7xk2p-st-pool-a-volumes holds 1 RBD image(s)") {
			t.Errorf("status.consumedPools.storage = %v, want st-pool-a listed with what it holds", get(status(rsp), "consumedPools", "storage"))
		}
	})

	t.Run("it goes once empty", func(t *testing.T) {
		rsp := run(t, world(0).request(teamA(onlyB)))
		mustNotFail(t, rsp)
		for _, n := range resourceNames(rsp) {
			if strings.Contains(n, "st-pool-a") {
				t.Errorf("%s is still composed, its Ceph pools empty", n)
			}
		}
		if m := condition(rsp, conditionPoolsReady).GetMessage(); strings.Contains(m, "st-pool-a") {
			t.Errorf("PoolsReady still names st-pool-a: %s", m)
		}
	})

	t.Run("it goes with its data under dataPolicy Delete", func(t *testing.T) {
		rsp := run(t, world(3).request(teamA(onlyB, func(s map[string]any) { s["dataPolicy"] = "Delete" })))
		mustNotFail(t, rsp)
		names := resourceNames(rsp)
		if slices.ContainsFunc(names, func(n string) bool { return strings.Contains(n, "st-pool-a") }) {
			t.Errorf("st-pool-a's objects are still composed under dataPolicy Delete: %v", names)
		}
		if got := get(desired(t, rsp, "ceph-st-pool-b-volumes"), "spec", "forProvider", "dataPolicy"); got != "Delete" {
			t.Errorf("the tenant's Ceph pools take dataPolicy %v, want the cloud's Delete", got)
		}
	})
}

// TestLeavingHypervisorPool: a hypervisor pool removed from the claim stays
// the cloud's, its aggregate holding the nodes that still run the cloud's
// instances, until the pool has taken back every node; its record asks for
// nothing, and the claim names the nodes and the instances.
func TestLeavingHypervisorPool(t *testing.T) {
	onlyB := setPoolsOf(map[string]any{"name": "hv-pool-b", "nodes": 4})
	world := func(share map[string]any) world {
		w := allReady()
		w.observed["usage-hypervisor-hv-pool-a"] = usageObserved(map[string]any{"c5c3.io/cloud": "team-a/prod", "c5c3.io/asked-nodes": "20", "c5c3.io/allocated-nodes": "20"})
		w.left = map[string][]any{"hv-pool-a": {fntest.Map(map[string]any{"s": share}, "s")}}
		return w
	}
	share := func(asked int, nodes, draining []any, instances int) map[string]any {
		return map[string]any{"cloud": "team-a-prod-7xk2p", "claim": "team-a/prod", "asked": asked, "allocated": asked, "nodes": nodes, "draining": draining, "instances": instances}
	}
	cases := map[string]struct {
		share map[string]any
		// hosts of the leaving pool's aggregate; nil: it goes.
		hosts []any
		says  string
	}{
		"the pool has not seen the cloud ask for nothing": {share(20, []any{"node-1", "node-2"}, nil, 0), []any{"node-1", "node-2"},
			"hypervisor pool hv-pool-a, removed from spec.hypervisorClusters, stays the cloud's: the pool has not yet taken back the nodes it gave the cloud"},
		"a node still runs instances": {share(0, nil, []any{"node-9"}, 3), []any{"node-9"},
			"hypervisor pool hv-pool-a, removed from spec.hypervisorClusters, stays the cloud's: its nodes node-9 still run the cloud's 3 instance(s): migrate or delete them"},
		"every node given back": {share(0, nil, nil, 0), nil, ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := run(t, world(tc.share).request(teamA(onlyB)))
			mustNotFail(t, rsp)
			r, composed := rsp.GetDesired().GetResources()["aggregate-hv-pool-a"]
			if tc.hosts == nil {
				if composed || slices.Contains(resourceNames(rsp), "usage-hypervisor-hv-pool-a") {
					t.Errorf("hv-pool-a, given back in full, is still composed: %v", resourceNames(rsp))
				}
				return
			}
			if !composed {
				t.Fatalf("hv-pool-a's aggregate is gone while the pool holds the cloud's nodes: %v", resourceNames(rsp))
			}
			if diff := cmp.Diff(tc.hosts, get(r.GetResource().AsMap(), "spec", "forProvider", "hosts")); diff != "" {
				t.Errorf("the leaving pool's aggregate hosts (-want +got):\n%s", diff)
			}
			if got := get(desired(t, rsp, "usage-hypervisor-hv-pool-a"), "metadata", "annotations", "c5c3.io/asked-nodes"); got != "0" {
				t.Errorf("the leaving pool's record asks for %v nodes, want 0", got)
			}
			if c := condition(rsp, conditionPoolsReady); !strings.Contains(c.GetMessage(), tc.says) {
				t.Errorf("PoolsReady says %q, want %q", c.GetMessage(), tc.says)
			}
		})
	}
}

// TestTheControlPlaneKnowsItsPools: the ControlPlane names the cloud's pools
// as the C5C3 docs' does; each pool gets a ClusterAccess limited to the
// cloud's namespace there and, for a hypervisor pool, the nodes the cloud
// holds, to which its workloads are confined by their label, and its kubeconfig is copied into the cloud's namespace of the
// control-plane cluster, labelled as a cluster registration; a landscape
// whose ControlPlane CRD drops the pool references says so in Supported.
func TestTheControlPlaneKnowsItsPools(t *testing.T) {
	w := allReady()
	w.named = map[string]map[string][]string{"hv-pool-a": {"team-a-prod-7xk2p": {"node-2", "node-1"}}}
	rsp := run(t, w.request(teamA()))
	mustNotFail(t, rsp)

	spec := get(manifestOf(desired(t, rsp, "control-plane")), "spec").(map[string]any)
	if diff := cmp.Diff(map[string]any{"hypervisorClusters": []any{"hv-pool-a"}}, spec["compute"]); diff != "" {
		t.Errorf("ControlPlane spec.compute (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"storageClusters": []any{"st-pool-a"}}, spec["storage"]); diff != "" {
		t.Errorf("ControlPlane spec.storage (-want +got):\n%s", diff)
	}

	access := desired(t, rsp, "access-hypervisor-hv-pool-a")
	want := map[string]any{"namespace": "openstack-team-a-prod-7xk2p", "serviceAccount": "c5c3-control-plane", "nodes": []any{"node-1", "node-2"}, "workloads": true,
		"nodeSelector": map[string]any{"c5c3.io.node-restriction.kubernetes.io/cloud": "team-a-prod-7xk2p"}}
	if diff := cmp.Diff(want, get(access, "spec", "forProvider")); diff != "" {
		t.Errorf("the hypervisor pool's ClusterAccess (-want +got):\n%s", diff)
	}
	if got := get(access, "spec", "providerConfigRef", "name"); got != "hypervisor-hv-pool-a" {
		t.Errorf("the ClusterAccess goes through ProviderConfig %v, want the pool's hypervisor-hv-pool-a", got)
	}
	if got := get(desired(t, rsp, "access-storage-st-pool-a"), "spec", "forProvider"); get(got, "nodes") != nil || get(got, "workloads") != false || get(got, "nodeSelector") != nil {
		t.Errorf("the storage pool's ClusterAccess names nodes or runs workloads: %v, want neither", got)
	}
	cp := desired(t, rsp, "access-hypervisor-hv-pool-a-kubeconfig")
	if got := get(cp, "spec", "forProvider", "source", "name"); got != get(access, "spec", "writeConnectionSecretToRef", "name") {
		t.Errorf("the kubeconfig is copied from %v, not the ClusterAccess's connection secret", got)
	}
	target := get(cp, "spec", "forProvider", "target").(map[string]any)
	if target["namespace"] != "openstack-team-a-prod-7xk2p" || target["name"] != "hypervisor-hv-pool-a-kubeconfig" || get(target, "labels", labelKubeconfig) != "true" {
		t.Errorf("the kubeconfig goes to %v", target)
	}
	if c := condition(rsp, conditionControlPlaneReady); c.GetStatus() != fnv1.Status_STATUS_CONDITION_TRUE ||
		!strings.HasSuffix(c.GetMessage(), "its pools' kubeconfigs are in Secrets hypervisor-hv-pool-a-kubeconfig, storage-st-pool-a-kubeconfig of namespace openstack-team-a-prod-7xk2p") {
		t.Errorf("ControlPlaneReady = %v: %s", c.GetStatus(), c.GetMessage())
	}
	if c := condition(rsp, conditionSupported); strings.Contains(c.GetMessage(), "spec.compute") {
		t.Errorf("Supported names the pool references before the ControlPlane is observed: %s", c.GetMessage())
	}

	// The landscape's CRD pruned the fields: the operator does not take them.
	observedCP := func(spec map[string]any) string {
		return fntest.Edit(w.observed["control-plane"], func(m map[string]any) {
			fntest.Map(m, "status", "atProvider", "manifest")["spec"] = spec
		})
	}
	w.observed["control-plane"] = observedCP(map[string]any{"openStackRelease": "2025.2"})
	rsp = run(t, w.request(teamA()))
	c := condition(rsp, conditionSupported)
	if c.GetStatus() != fnv1.Status_STATUS_CONDITION_FALSE || !strings.Contains(c.GetMessage(), "ControlPlane spec.compute.hypervisorClusters, ControlPlane spec.storage.storageClusters") {
		t.Errorf("Supported = %v: %s, want False naming the dropped pool references", c.GetStatus(), c.GetMessage())
	}
	w.observed["control-plane"] = observedCP(map[string]any{"compute": map[string]any{"hypervisorClusters": []any{"hv-pool-a"}}, "storage": map[string]any{"storageClusters": []any{"st-pool-a"}}})
	if c := condition(run(t, w.request(teamA())), conditionSupported); strings.Contains(c.GetMessage(), "spec.compute") {
		t.Errorf("Supported names pool references the landscape keeps: %s", c.GetMessage())
	}
}

// TestStretchedStoragePool: in a storage pool stretched over two zones
// (#42) every Ceph pool of the cloud keeps 2 replicas in each zone on the
// pool's device class — its RBD pools as the provider's stretched Pools
// (size 4, min_size 2), its CephFS's pools as Rook places a stretch —
// whatever replication the claim asks, and its share of the pool's raw
// capacity counts the 4 replicas; the cloud's status says how Ceph
// placed each pool.
func TestStretchedStoragePool(t *testing.T) {
	w := allReady()
	w.st[0] = stPool("st-pool-a", "eu-de-1", "Ready", func(s map[string]any) {
		s["arbiterCluster"], s["zones"] = "cp-eu-de-1", []any{"eu-de-1a", "eu-de-1b"}
		s["ceph"] = map[string]any{"deviceClass": "nvme", "replicationFactor": 4}
	})
	w.observed["ceph-st-pool-a-volumes"] = readyManaged(ceph, "Pool", "team-a-prod-7xk2p-st-pool-a-volumes",
		map[string]any{"usedBytes": 1 << 30, "crushRule": "stretch_zone", "size": 4, "minSize": 2})
	rsp := run(t, w.request(teamA(func(s map[string]any) {
		c := get(s, "storage", "ceph").(map[string]any)
		c["volumePool"] = map[string]any{"replication": 3, "quotaGB": 100}
		c["filesystem"] = map[string]any{"enabled": true, "dataPoolReplication": 2, "metadataPoolReplication": 3, "quotaGB": 50}
	})))
	mustNotFail(t, rsp)
	for _, use := range []string{"volumes", "images", "ephemeral"} {
		fp := get(desired(t, rsp, "ceph-st-pool-a-"+use), "spec", "forProvider").(map[string]any)
		got := map[string]any{"size": fp["size"], "minSize": fp["minSize"], "stretch": fp["stretch"], "deviceClass": fp["deviceClass"]}
		want := map[string]any{"size": float64(4), "minSize": float64(2), "stretch": map[string]any{"root": "default", "zoneType": "zone"}, "deviceClass": "nvme"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("the %s Pool's placement (-want +got):\n%s", use, diff)
		}
	}
	stretchedRook := map[string]any{"failureDomain": "zone", "parameters": map[string]any{"min_size": "2"},
		"replicated": map[string]any{"size": float64(4), "requireSafeReplicaSize": true, "replicasPerFailureDomain": float64(2), "subFailureDomain": "host"}}
	fs := manifestOf(desired(t, rsp, "ceph-st-pool-a-filesystem"))
	data := maps.Clone(stretchedRook)
	data["name"], data["quotas"] = "data0", map[string]any{"maxSize": "50Gi"}
	if diff := cmp.Diff(data, get(fs, "spec", "dataPools", 0)); diff != "" {
		t.Errorf("the CephFilesystem's data pool (-want +got):\n%s", diff)
	}
	meta := maps.Clone(stretchedRook)
	meta["quotas"] = map[string]any{"maxSize": "5Gi"}
	if diff := cmp.Diff(meta, get(fs, "spec", "metadataPool")); diff != "" {
		t.Errorf("the CephFilesystem's metadata pool (-want +got):\n%s", diff)
	}
	usage := desired(t, rsp, "usage-storage-st-pool-a")
	if got := get(usage, "metadata", "annotations", pool.AnnotationAskedGB); got != "740" {
		t.Errorf("the cloud asks st-pool-a for %v GB, want every pool's quota × 4 replicas: (100 + 10 + 20 + 50 + 5) × 4", got)
	}
	res := get(status(rsp), "cephResources").([]any)[0]
	if got := get(res, "volumePool", "placement"); got != "stretch_zone, size 4, min_size 2" {
		t.Errorf("status.cephResources[0].volumePool.placement = %v", got)
	}
}

// TestSwitchedOffFilesystemAndObjectStoreKeepTheData: a claim that switches
// its filesystem or object store off does not delete the tenant's files or
// objects under dataPolicy Retain: the Rook object stays as it was (its
// pools preserved) and the claim says so; under the platform's Delete it
// goes, Rook told first to delete its pools with it (#52 §6).
func TestSwitchedOffFilesystemAndObjectStoreKeepTheData(t *testing.T) {
	on := func(s map[string]any) {
		get(s, "storage", "ceph").(map[string]any)["filesystem"] = map[string]any{"enabled": true, "dataPoolReplication": 2, "metadataPoolReplication": 3}
		get(s, "storage", "ceph").(map[string]any)["objectStore"] = map[string]any{"enabled": true, "dataPoolReplication": 3}
	}
	off := func(s map[string]any) {
		get(s, "storage", "ceph").(map[string]any)["filesystem"] = map[string]any{"enabled": false}
		get(s, "storage", "ceph").(map[string]any)["objectStore"] = map[string]any{"enabled": false}
	}
	keys := []string{"ceph-st-pool-a-filesystem", "ceph-st-pool-a-object-store"}
	// observedOn is the world with both composed as on returns them.
	observedOn := func(t *testing.T, policy string) world {
		t.Helper()
		w := allReady()
		policyOf := func(s map[string]any) { s["dataPolicy"] = policy }
		rsp := run(t, w.request(teamA(on, policyOf)))
		mustNotFail(t, rsp)
		for _, k := range keys {
			o := desired(t, rsp, k)
			o["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True", "reason": "Available", "lastTransitionTime": "2026-11-22T08:00:00Z"}}}
			b, _ := json.Marshal(o)
			w.observed[k] = string(b)
		}
		return w
	}

	t.Run("Retain: both stay as they were, and the claim says why", func(t *testing.T) {
		w := observedOn(t, "Retain")
		rsp := run(t, w.request(teamA(off)))
		mustNotFail(t, rsp)
		fs, os := manifestOf(desired(t, rsp, keys[0])), manifestOf(desired(t, rsp, keys[1]))
		if get(fs, "spec", "dataPools", 0, "replicated", "size") != float64(2) || get(fs, "spec", "preservePoolsOnDelete") != true || get(fs, "spec", "preserveFilesystemOnDelete") != true {
			t.Errorf("the kept CephFilesystem's spec changed: %v", get(fs, "spec"))
		}
		if get(os, "spec", "preservePoolsOnDelete") != true {
			t.Errorf("the kept CephObjectStore does not preserve its pools: %v", get(os, "spec"))
		}
		msg := condition(rsp, "StorageReady").GetMessage()
		for _, want := range []string{
			"CephFilesystem team-a-prod-7xk2p-cephfs in st-pool-a stays though spec.storage.ceph.filesystem is off: it holds the tenant's files (spec.dataPolicy Retain)",
			"CephObjectStore team-a-prod-7xk2p-rgw in st-pool-a stays though spec.storage.ceph.objectStore is off: it holds the tenant's objects (spec.dataPolicy Retain)",
		} {
			if !strings.Contains(msg, want) {
				t.Errorf("StorageReady says %q, not %q", msg, want)
			}
		}
		if get(status(rsp), "cephResources", 0, "filesystem", "name") != "team-a-prod-7xk2p-cephfs" {
			t.Errorf("status.cephResources[0].filesystem = %v, want the kept filesystem", get(status(rsp), "cephResources", 0, "filesystem"))
		}
	})

	t.Run("Delete: told to delete their pools, then gone", func(t *testing.T) {
		w := observedOn(t, "Retain")
		deleteData := func(s map[string]any) { s["dataPolicy"] = "Delete" }
		rsp := run(t, w.request(teamA(off, deleteData)))
		mustNotFail(t, rsp)
		for _, k := range keys {
			for _, f := range []string{"preserveFilesystemOnDelete", "preservePoolsOnDelete"} {
				if got := get(manifestOf(desired(t, rsp, k)), "spec", f); got == true {
					t.Errorf("%s spec.%s is still true: Rook would keep the pools when it goes", k, f)
				}
			}
		}
		if msg := condition(rsp, "StorageReady").GetMessage(); !strings.Contains(msg, "is being deleted with its pools and the tenant's files (spec.dataPolicy Delete)") {
			t.Errorf("StorageReady says %q", msg)
		}
		// Once Rook has the flags unset, the objects go.
		w2 := observedOn(t, "Delete")
		rsp = run(t, w2.request(teamA(off, deleteData)))
		mustNotFail(t, rsp)
		for _, k := range keys {
			if _, ok := rsp.GetDesired().GetResources()[k]; ok {
				t.Errorf("%s is still composed under Delete once its pools are not preserved", k)
			}
		}
	})
}

// TestEveryTenantPoolHasAQuota: every pool of a tenant in a shared storage
// pool has a quota, from the claim or the defaults of its size, and the
// cloud's share of the storage pool counts them all, times their
// replication; a cloud whose pools together do not fit is refused, saying
// what it asks for pool by pool; a larger quota waits for the share it
// takes, the pools keeping what they have (#52 §7).
func TestEveryTenantPoolHasAQuota(t *testing.T) {
	defaults := func(s map[string]any) {
		c := get(s, "storage", "ceph").(map[string]any)
		c["imagePool"] = map[string]any{"replication": 3}
		c["ephemeralPool"] = map[string]any{"enabled": true, "replication": 2}
		c["filesystem"] = map[string]any{"enabled": true, "dataPoolReplication": 3, "metadataPoolReplication": 3}
		c["objectStore"] = map[string]any{"enabled": true, "dataPoolReplication": 3}
	}
	large := v1alpha1.SizeLarge
	img, eph := v1alpha1.DefaultImageQuotaGB[large], v1alpha1.DefaultEphemeralQuotaGB[large]
	fs, rgw := v1alpha1.DefaultFilesystemQuotaGB[large], v1alpha1.DefaultObjectStoreQuotaGB[large]
	fsMeta, rgwMeta := fs/10, rgw/10

	t.Run("the defaults of its size, counted in its share", func(t *testing.T) {
		w := allReady()
		rsp := run(t, w.request(teamA(defaults)))
		mustNotFail(t, rsp)
		for use, gb := range map[string]int64{"volumes": 100, "images": img, "ephemeral": eph} {
			if got := get(desired(t, rsp, "ceph-st-pool-a-"+use), "spec", "forProvider", "quotaMaxBytes"); got != float64(gb<<30) {
				t.Errorf("the %s pool's quotaMaxBytes = %v, want %d GiB", use, got, gb)
			}
		}
		fsSpec := get(manifestOf(desired(t, rsp, "ceph-st-pool-a-filesystem")), "spec")
		rgwSpec := get(manifestOf(desired(t, rsp, "ceph-st-pool-a-object-store")), "spec")
		for what, q := range map[string]struct {
			got  any
			want string
		}{
			"the filesystem's data pool":       {get(fsSpec, "dataPools", 0, "quotas", "maxSize"), fmt.Sprintf("%dGi", fs)},
			"the filesystem's metadata pool":   {get(fsSpec, "metadataPool", "quotas", "maxSize"), fmt.Sprintf("%dGi", fsMeta)},
			"the object store's data pool":     {get(rgwSpec, "dataPool", "quotas", "maxSize"), fmt.Sprintf("%dGi", rgw)},
			"the object store's metadata pool": {get(rgwSpec, "metadataPool", "quotas", "maxSize"), fmt.Sprintf("%dGi", rgwMeta)},
		} {
			if q.got != q.want {
				t.Errorf("%s's quotas.maxSize = %v, want %s", what, q.got, q.want)
			}
		}
		want := 100*3 + img*3 + eph*2 + fs*3 + fsMeta*3 + rgw*3 + rgwMeta*3*7
		if got := get(desired(t, rsp, "usage-storage-st-pool-a"), "metadata", "annotations", pool.AnnotationAskedGB); got != fmt.Sprint(want) {
			t.Errorf("the cloud asks st-pool-a for %v GB, want %d: every pool's quota times its replicas (7 metadata pools of an object store)", got, want)
		}
		res := get(status(rsp), "cephResources", 0)
		for field, gb := range map[string]int64{"volumePool": 100, "imagePool": img, "ephemeralPool": eph, "filesystem": fs, "objectStore": rgw} {
			if got := get(res, field, "quotaGB"); got != float64(gb) {
				t.Errorf("status.cephResources[0].%s.quotaGB = %v, want %d", field, got, gb)
			}
		}
	})

	t.Run("unlimited in a dedicated pool, which shares nothing out", func(t *testing.T) {
		w := eu()
		fin := cloudXR("finance-prod-1", "finance", "2026-11-05T00:00:00Z", spec(defaults, func(s map[string]any) {
			setPools(s, map[string]any{"name": "hv-pool-fin"})
			s["storageClusters"] = []any{"st-pool-fin"}
			get(s, "storage", "ceph", "volumePool").(map[string]any)["quotaGB"] = 0
		}), "", nil)
		rsp := run(t, w.request(fin))
		mustNotFail(t, rsp)
		for _, use := range []string{"volumes", "images", "ephemeral"} {
			if got := get(desired(t, rsp, "ceph-st-pool-fin-"+use), "spec", "forProvider", "quotaMaxBytes"); got != nil {
				t.Errorf("the %s pool in the dedicated st-pool-fin has quotaMaxBytes %v, want none", use, got)
			}
		}
		if got := get(manifestOf(desired(t, rsp, "ceph-st-pool-fin-filesystem")), "spec", "dataPools", 0, "quotas"); got != nil {
			t.Errorf("the filesystem in the dedicated st-pool-fin has quotas %v, want none", got)
		}
		if got := get(desired(t, rsp, "usage-storage-st-pool-fin"), "metadata", "annotations", pool.AnnotationAskedGB); got != nil && got != "0" {
			t.Errorf("the cloud asks the dedicated st-pool-fin for %v GB, want nothing", got)
		}
	})

	t.Run("its pools together larger than the free share: refused, pool by pool", func(t *testing.T) {
		// The volume pool alone (300 GB) fits the 1,000 GB left; with the
		// filesystem and the object store it does not.
		w := eu()
		w.st[0] = fntest.Edit(stPool("st-pool-a", "eu-de-1", "Ready"), func(m map[string]any) {
			st := fntest.Map(m, "status")
			st["shareableGB"], st["shares"] = 101400, []any{
				map[string]any{"cloud": "team-b-staging-1", "claim": "team-b/team-b-staging-1", "askedGB": 100400, "allocatedGB": 100400},
				map[string]any{"cloud": "team-a-prod-7xk2p", "claim": "team-a/team-a-prod-7xk2p", "askedGB": 1210, "allocatedGB": 0},
			}
		})
		rsp := run(t, w.request(teamA(func(s map[string]any) {
			c := get(s, "storage", "ceph").(map[string]any)
			c["filesystem"] = map[string]any{"enabled": true, "dataPoolReplication": 3, "metadataPoolReplication": 3, "quotaGB": 100}
			c["objectStore"] = map[string]any{"enabled": true, "dataPoolReplication": 3, "quotaGB": 100}
		})))
		mustNotFail(t, rsp)
		want := "spec.storage.ceph: storage pool st-pool-a would be over-committed: of its 101400 GB, 1000 are free (100400 GB held by 1 other cloud), and the cloud asks for 1210 " +
			"(volumePool 100 GB × 3 replicas + imagePool 10 GB × 3 replicas + ephemeralPool 20 GB × 2 replicas + filesystem 100 GB × 3 replicas + filesystem's metadata 10 GB × 3 replicas + " +
			"objectStore 100 GB × 3 replicas + objectStore's metadata 10 GB × 3 replicas × 7 pools); until every pool has room for it, the cloud holds nothing of hypervisor pool hv-pool-a"
		if got := refusal(t, rsp); got != want {
			t.Errorf("refusal:\n got %q\nwant %q", got, want)
		}
	})

	t.Run("a larger quota waits for its share; the pools keep what they have", func(t *testing.T) {
		// The cloud holds 370 GB (volumes 100 × 3, images 10 × 3,
		// ephemeral 20 × 2), and now asks for images of 50 GB and a
		// filesystem: the pool has not given that yet.
		w := allReady()
		w.st[0] = fntest.Edit(w.st[0], func(m map[string]any) {
			st := fntest.Map(m, "status")
			st["shareableGB"], st["allocatedGB"], st["shares"] = 102400, 370, []any{
				map[string]any{"cloud": "team-a-prod-7xk2p", "claim": "team-a/team-a-prod-7xk2p", "askedGB": 370, "allocatedGB": 370},
			}
		})
		for use, gb := range map[string]int64{"volumes": 100, "images": 10, "ephemeral": 20} {
			w.observed["ceph-st-pool-a-"+use] = fntest.Edit(w.observed["ceph-st-pool-a-"+use], func(m map[string]any) {
				m["spec"] = map[string]any{"forProvider": map[string]any{"size": 3, "quotaMaxBytes": gb << 30}}
			})
		}
		rsp := run(t, w.request(teamA(func(s map[string]any) {
			c := get(s, "storage", "ceph").(map[string]any)
			c["imagePool"].(map[string]any)["quotaGB"] = 50
			c["filesystem"] = map[string]any{"enabled": true, "dataPoolReplication": 3, "metadataPoolReplication": 3, "quotaGB": 100}
		})))
		mustNotFail(t, rsp)
		for use, gb := range map[string]int64{"volumes": 100, "images": 10, "ephemeral": 20} {
			if got := get(desired(t, rsp, "ceph-st-pool-a-"+use), "spec", "forProvider", "quotaMaxBytes"); got != float64(gb<<30) {
				t.Errorf("while the pool decides, the %s pool's quotaMaxBytes = %v, want the %d GiB it has", use, got, gb)
			}
		}
		if _, ok := rsp.GetDesired().GetResources()["ceph-st-pool-a-filesystem"]; ok {
			t.Error("the filesystem is composed before the pool gave the share it takes")
		}
		if got := get(desired(t, rsp, "usage-storage-st-pool-a"), "metadata", "annotations", pool.AnnotationAskedGB); got != "820" {
			t.Errorf("the cloud asks for %v GB, want 820 (300 + 150 + 40 + 300 + 30)", got)
		}
	})

	t.Run("a switched-off filesystem kept under Retain still counts", func(t *testing.T) {
		w := allReady()
		w.observed["ceph-st-pool-a-filesystem"] = readyObject("team-a-prod-7xk2p-st-pool-a-cephfs", nil)
		w.observed["ceph-st-pool-a-filesystem"] = fntest.Edit(w.observed["ceph-st-pool-a-filesystem"], func(m map[string]any) {
			m["spec"] = map[string]any{"forProvider": map[string]any{"manifest": map[string]any{"spec": map[string]any{
				"dataPools":    []any{map[string]any{"name": "data0", "quotas": map[string]any{"maxSize": "100Gi"}}},
				"metadataPool": map[string]any{"quotas": map[string]any{"maxSize": "10Gi"}},
			}}}}
		})
		rsp := run(t, w.request(teamA()))
		mustNotFail(t, rsp)
		if got := get(desired(t, rsp, "usage-storage-st-pool-a"), "metadata", "annotations", pool.AnnotationAskedGB); got != "700" {
			t.Errorf("the cloud asks for %v GB, want 700: 370 and the kept filesystem's 100 × 3 + 10 × 3", got)
		}
	})
}

// TestDataAvailable: the claim says whether the storage pools holding its
// data serve its reads and writes, from what each pool's Ceph reports
// (#54 §2): inactive placement groups in a pool name that pool (the
// stretched pool that lost a zone left its PGs peered while every pool was
// Ready); a zone down that still serves is Degraded; a pool that has not
// reported its health says nothing.
func TestDataAvailable(t *testing.T) {
	withChecks := func(health string, checks ...any) func(w *world) {
		return func(w *world) {
			w.st[0] = fntest.Edit(stPool("st-pool-a", "eu-de-1", "Ready"), func(m map[string]any) {
				st := fntest.Map(m, "status")
				st["health"], st["healthChecks"] = health, checks
				if health == "" {
					delete(st, "health")
				}
			})
		}
	}
	for name, tc := range map[string]struct {
		mutate      func(w *world)
		status      string // "" no condition
		reason, msg string
	}{
		"healthy": {withChecks("HEALTH_OK"), "True", "Available", "every storage pool of the cloud serves its reads and writes"},
		"inactive placement groups": {withChecks("HEALTH_WARN", "HEALTH_WARN DEGRADED_STRETCH_MODE: only requiring 1 of 2 buckets to peer", "HEALTH_WARN PG_AVAILABILITY: Reduced data availability: 25 pgs inactive"),
			"False", "Unavailable", "storage pool st-pool-a: placement groups are inactive: reads and writes of the data in them block (HEALTH_WARN PG_AVAILABILITY: Reduced data availability: 25 pgs inactive)"},
		"a zone down, still serving": {withChecks("HEALTH_WARN", "HEALTH_WARN DEGRADED_STRETCH_MODE: only requiring 1 of 2 buckets to peer"),
			"True", "Degraded", "storage pool st-pool-a: reads and writes are served from one zone, with less redundancy than the pool promises until the other is back (HEALTH_WARN DEGRADED_STRETCH_MODE: only requiring 1 of 2 buckets to peer)"},
		"not reported yet": {mutate: withChecks("")},
		"the pool's Ceph cannot be read now": {func(w *world) {
			withChecks("HEALTH_OK")(w)
			w.st[0] = fntest.Edit(w.st[0], func(m map[string]any) {
				fntest.Map(m, "status")["unreachable"] = "the storage agent's CephStatus ceph cannot be read now: connection refused"
			})
		}, "Unknown", "Unreachable", "whether these storage pools serve the cloud's data is unknown while they cannot be read: storage pool st-pool-a: the storage agent's CephStatus ceph cannot be read now: connection refused"},
	} {
		t.Run(name, func(t *testing.T) {
			w := allReady()
			tc.mutate(&w)
			rsp := run(t, w.request(teamA()))
			mustNotFail(t, rsp)
			c := condition(rsp, "DataAvailable")
			if tc.status == "" {
				if c != nil {
					t.Errorf("DataAvailable = %v, want none", c)
				}
				return
			}
			if c == nil || !strings.HasSuffix(c.GetStatus().String(), strings.ToUpper(tc.status)) || c.GetReason() != tc.reason || c.GetMessage() != tc.msg || c.GetTarget() != fnv1.Target_TARGET_COMPOSITE_AND_CLAIM {
				t.Errorf("DataAvailable = %v, want %s %s: %s on the claim", c, tc.status, tc.reason, tc.msg)
			}
		})
	}
}
