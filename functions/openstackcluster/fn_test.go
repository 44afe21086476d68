package main

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"

	"github.com/c5c3/consumer-plane/internal/function/fntest"
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
			"labels": map[string]any{labelClaimName: claimName, labelClaimNamespace: claimNamespace}},
		"spec": spec, "status": status,
	})
	if err != nil {
		panic(err)
	}
	return string(b)
}

// spec is a cloud's spec as the API server would default it.
func spec(mutate ...func(map[string]any)) map[string]any {
	s := map[string]any{
		"region": "eu-de-1", "size": "large", "openStackRelease": "2025.2",
		"hypervisorClusters": []any{map[string]any{"name": "hv-pool-a", "nodes": 20}},
		"storageClusters":    []any{"st-pool-a"},
		"services":           map[string]any{"nova": true, "neutron": true, "cinder": true, "glance": true, "horizon": true, "octavia": false, "manila": false, "barbican": false},
		"cortex":             map[string]any{"enabled": false},
		"tls":                map[string]any{"enabled": false},
		"network":            map[string]any{"mtu": 1500},
		"storage": map[string]any{"ceph": map[string]any{
			"volumePool":    map[string]any{"replication": 3, "compression": "aggressive", "quotaGB": 100},
			"imagePool":     map[string]any{"replication": 3, "compression": "aggressive"},
			"ephemeralPool": map[string]any{"enabled": true, "replication": 2},
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
	observed           map[string]string
	input              string
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

func (w world) request(xr string) *fnv1.RunFunctionRequest {
	req := fntest.WithInput(fntest.Request(xr, w.observed), w.input)
	fntest.WithRequired(req, requiredHypervisorPools, false, w.hv...)
	fntest.WithRequired(req, requiredStoragePools, false, w.st...)
	fntest.WithRequired(req, requiredControlPlanes, false, w.cp...)
	fntest.WithRequired(req, requiredClouds, false, append([]string{xr}, w.clouds...)...)
	return req
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

// stage applies the observed state of one more stage to w.
func (w *world) namespaceReady() { w.observed["namespace"] = readyObject("team-a-prod-7xk2p-namespace", nil) }

func (w *world) storageReady() {
	for _, use := range []string{"volumes", "images", "ephemeral"} {
		w.observed["ceph-st-pool-a-"+use] = readyManaged(ceph, "Pool", "team-a-prod-7xk2p-st-pool-a-"+use,
			map[string]any{"usedBytes": 1 << 30, "availableBytes": 1 << 40})
	}
	w.observed["ceph-st-pool-a-client"] = readyManaged(ceph, "Client", "team-a-prod-7xk2p-st-pool-a-client", nil)
}

func (w *world) keyCopied() {
	w.observed["ceph-st-pool-a-client-secret"] = readyObject("team-a-prod-7xk2p-st-pool-a-ceph-client", nil)
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
	w.observed["provider-config"] = `{"apiVersion": "openstack.provider.c5c3.io/v1alpha1", "kind": "ProviderConfig", "metadata": {"name": "team-a-prod-7xk2p"}}`
	for key, kind := range map[string]string{"project": "keystone.provider.c5c3.io/v1alpha1/Project",
		"aggregate-hv-pool-a": "nova.provider.c5c3.io/v1alpha1/Aggregate", "volume-type-st-pool-a": "cinder.provider.c5c3.io/v1alpha1/VolumeType",
		"compute-quota": "nova.provider.c5c3.io/v1alpha1/QuotaSet", "volume-quota": "cinder.provider.c5c3.io/v1alpha1/QuotaSet",
		"network-quota": "neutron.provider.c5c3.io/v1alpha1/QuotaSet"} {
		i := strings.LastIndex(kind, "/")
		w.observed[key] = readyManaged(kind[:i], kind[i+1:], key, nil)
	}
}

// TestFirstCallRequiresTheLandscape: before Crossplane has supplied the
// required resources the function asks for every pool, control-plane
// cluster and cloud, in the 1.x and 2.x fields, and composes nothing.
func TestFirstCallRequiresTheLandscape(t *testing.T) {
	req := fntest.WithInput(fntest.Request(teamA(), nil), eu().input)
	rsp := run(t, req)
	mustNotFail(t, rsp)
	if n := resourceNames(rsp); len(n) != 0 {
		t.Errorf("composed %v before the landscape was known", n)
	}
	want := map[string]string{requiredHypervisorPools: "XHypervisorCluster", requiredStoragePools: "XStorageCluster",
		requiredControlPlanes: "XControlPlaneCluster", requiredClouds: "XOpenStackCluster"}
	for key, kind := range want {
		for field, sels := range map[string]map[string]*fnv1.ResourceSelector{
			"resources": rsp.GetRequirements().GetResources(), "extra_resources": rsp.GetRequirements().GetExtraResources()} { //nolint:staticcheck // 1.x
			sel := sels[key]
			if sel.GetKind() != kind || sel.GetApiVersion() != "crossplane.c5c3.io/v1alpha1" || sel.GetMatchLabels() == nil || len(sel.GetMatchLabels().GetLabels()) != 0 {
				t.Errorf("requirements.%s[%s] = %v, want every %s", field, key, sel, kind)
			}
		}
	}
}

// TestCrossplane1SuppliesExtraResources: on Crossplane 1.x the landscape
// arrives as extra_resources and the function composes from it alike.
func TestCrossplane1SuppliesExtraResources(t *testing.T) {
	w := eu()
	req := fntest.WithInput(fntest.Request(teamA(), nil), w.input)
	fntest.WithRequired(req, requiredHypervisorPools, true, w.hv...)
	fntest.WithRequired(req, requiredStoragePools, true, w.st...)
	fntest.WithRequired(req, requiredControlPlanes, true, w.cp...)
	fntest.WithRequired(req, requiredClouds, true)
	rsp := run(t, req)
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
	cloudObjects := []string{"aggregate-hv-pool-a", "compute-quota", "network-quota", "project", "provider-config", "volume-quota", "volume-type-st-pool-a"}
	type want struct {
		resources []string
		phase     string
		// conditions that must be True; the others must be False.
		ready   []string
		message map[string]string
	}
	steps := []struct {
		name  string
		apply func()
		want  want
	}{
		{"no pools", func() { w.hv, w.st = nil, nil }, want{
			phase: "Pending", ready: []string{},
			message: map[string]string{conditionPoolsReady: "waiting: hypervisor pool hv-pool-a does not exist; storage pool st-pool-a does not exist"},
		}},
		{"pools provisioning", func() {
			w = eu()
			w.hv[0] = hvPool("hv-pool-a", "eu-de-1", 50, "Provisioning")
			w.cp[0] = cpCluster("cp-eu-de-1", "eu-de-1", "")
		}, want{
			phase: "Pending", ready: []string{},
			message: map[string]string{conditionPoolsReady: "waiting: hypervisor pool hv-pool-a is Provisioning; control-plane cluster cp-eu-de-1 is not reporting a phase yet"},
		}},
		{"pools ready", func() { w = eu() }, want{
			resources: append([]string{"namespace"}, storage...), phase: "Provisioning", ready: []string{conditionPoolsReady},
			message: map[string]string{
				conditionPoolsReady:        "hypervisor pool hv-pool-a (20 of 50 nodes for this cloud), storage pool st-pool-a and control-plane cluster cp-eu-de-1 are ready",
				conditionControlPlaneReady: "namespace openstack-team-a-prod-7xk2p is being created in control-plane cluster cp-eu-de-1",
				conditionCloudReady:        "waiting for the ControlPlane",
			},
		}},
		{"namespace ready", w.namespaceReady, want{
			resources: append([]string{"control-plane", "namespace"}, storage...), phase: "Provisioning", ready: []string{conditionPoolsReady},
			message: map[string]string{conditionControlPlaneReady: "ControlPlane openstack-team-a-prod-7xk2p/team-a-prod-7xk2p in control-plane cluster cp-eu-de-1 is being created"},
		}},
		{"storage ready", w.storageReady, want{
			resources: append([]string{"ceph-st-pool-a-client-secret", "control-plane", "namespace"}, storage...), phase: "Provisioning", ready: []string{conditionPoolsReady},
			message: map[string]string{conditionStorageReady: "the key of openstack-team-a-prod-7xk2p is being copied to Secret openstack-team-a-prod-7xk2p/ceph-client-st-pool-a"},
		}},
		{"key copied", w.keyCopied, want{
			resources: append([]string{"ceph-st-pool-a-client-secret", "control-plane", "namespace"}, storage...), phase: "Provisioning",
			ready: []string{conditionPoolsReady, conditionStorageReady},
		}},
		{"control plane ready", w.controlPlaneReady, want{
			resources: append([]string{"admin-credential", "ceph-st-pool-a-client-secret", "control-plane", "namespace"}, storage...), phase: "Provisioning",
			ready: []string{conditionPoolsReady, conditionStorageReady, conditionControlPlaneReady},
			message: map[string]string{conditionCloudReady: "waiting for the admin credential Secret openstack-team-a-prod-7xk2p/k-orc-clouds-yaml in control-plane cluster cp-eu-de-1"},
		}},
		{"admin credential copied", w.adminReady, want{
			resources: slices.Concat([]string{"admin-credential", "ceph-st-pool-a-client-secret", "control-plane", "namespace"}, storage, cloudObjects), phase: "Provisioning",
			ready: []string{conditionPoolsReady, conditionStorageReady, conditionControlPlaneReady},
		}},
		{"cloud objects ready", w.cloudReady, want{
			resources: slices.Concat([]string{"admin-credential", "ceph-st-pool-a-client-secret", "control-plane", "namespace"}, storage, cloudObjects), phase: "Ready",
			ready: []string{conditionPoolsReady, conditionStorageReady, conditionControlPlaneReady, conditionCloudReady},
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
			for _, typ := range []string{conditionPoolsReady, conditionStorageReady, conditionControlPlaneReady, conditionCloudReady} {
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
		if got := string(rsp.GetDesired().GetComposite().GetConnectionDetails()["auth_url"]); got != "https://keystone.team-a-prod-7xk2p.cloud.example/v3" {
			t.Errorf("connection detail auth_url = %q", got)
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
		if got := len(resourceNames(rsp)); got != len(w.observed) {
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
