package fntest

import (
	"encoding/json"
	"fmt"
	"strings"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"google.golang.org/protobuf/types/known/structpb"

	input "github.com/c5c3/consumer-plane/apis/input/v1alpha1"
	ironcorev1alpha1 "github.com/c5c3/consumer-plane/apis/ironcore/v1alpha1"
	"github.com/c5c3/consumer-plane/internal/gardener"
	"github.com/c5c3/consumer-plane/internal/pool"
)

// ShootReady is a Shoot named name as Gardener reports it once its cluster is
// healthy: the last operation succeeded and every health condition is True.
func ShootReady(name string) string {
	cond := func(t string) string {
		return `{"type": "` + t + `", "status": "True", "lastTransitionTime": "2026-11-22T08:00:00Z", "lastUpdateTime": "2026-11-22T08:00:00Z", "reason": "r", "message": "m"}`
	}
	return `{
  "apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot", "metadata": {"name": "` + name + `", "namespace": "garden-c5c3"},
  "status": {
    "technicalID": "shoot--c5c3--` + name + `",
    "lastOperation": {"type": "Create", "state": "Succeeded", "progress": 100, "description": "done", "lastUpdateTime": "2026-11-22T08:00:00Z"},
    "conditions": [` + cond("APIServerAvailable") + `, ` + cond("ControlPlaneHealthy") + `, ` + cond("EveryNodeReady") + `, ` + cond("SystemComponentsHealthy") + `]
  }
}`
}

// ShootUnhealthy is the Shoot named name of a running cluster that turned
// unhealthy: a node NotReady (EveryNodeReady False).
func ShootUnhealthy(name string) string {
	return Edit(ShootReady(name), func(m map[string]any) {
		for _, c := range Map(m, "status")["conditions"].([]any) {
			if c := c.(map[string]any); c["type"] == "EveryNodeReady" {
				c["status"], c["message"] = "False", "node "+name+"-3 is NotReady"
			}
		}
	})
}

// Conditions internal/pool sets on the composite and its claim.
var (
	ShootCreating  = Condition("ShootReady", fnv1.Status_STATUS_CONDITION_FALSE, "Creating", "the Shoot is being created")
	ShootAvailable = Condition("ShootReady", fnv1.Status_STATUS_CONDITION_TRUE, "Available", "Shoot is ready")
	AccessNoShoot  = Condition("AccessReady", fnv1.Status_STATUS_CONDITION_FALSE, "Waiting", "waiting for the Shoot")
	AccessCreating = Condition("AccessReady", fnv1.Status_STATUS_CONDITION_FALSE, "Waiting", "the ShootKubeconfig is being created")
)

// AccessAvailable is the AccessReady condition of a reachable cluster.
func AccessAvailable(providerConfig string) *fnv1.Condition {
	return Condition("AccessReady", fnv1.Status_STATUS_CONDITION_TRUE, "Available", "ProviderConfig "+providerConfig+" reaches the cluster")
}

// LayerPending is the LayerApplied condition of a pool whose layer
// Kustomization (pool.PlaceLayer) is composed but not observed yet.
func LayerPending(providerConfig string) *fnv1.Condition {
	return Condition("LayerApplied", fnv1.Status_STATUS_CONDITION_FALSE, "Pending", "Kustomization crossplane-system/"+providerConfig+"-layer is being created")
}

// LayerApplied is the LayerApplied condition of a cluster whose layer
// Kustomization applied revision rev (AppliedLayer).
func LayerApplied(providerConfig, rev string) *fnv1.Condition {
	return Condition("LayerApplied", fnv1.Status_STATUS_CONDITION_TRUE, "Applied", "Kustomization crossplane-system/"+providerConfig+"-layer applied the layer at "+rev)
}

// AppliedLayer is the observed layer Kustomization of the cluster a reaches
// (pool.PlaceLayer) once Flux applied revision rev of it.
func AppliedLayer(a pool.Access, rev string) string {
	r := Layer(map[string]*fnv1.Resource{}, a, false)[string(pool.ResourceLayer)]
	m := r.GetResource().AsMap()
	m["status"] = map[string]any{
		"lastAppliedRevision": rev,
		"conditions":          []any{map[string]any{"type": "Ready", "status": "True", "reason": "ReconciliationSucceeded"}},
	}
	return mustJSON(m)
}

// ShootReconciling is a healthy Shoot named name that Gardener is
// reconciling (a change to an existing cluster) at progress percent.
func ShootReconciling(name string, progress int) string {
	return Edit(ShootReady(name), func(m map[string]any) {
		Map(m, "status")["lastOperation"] = map[string]any{
			"type": "Reconcile", "state": "Processing", "progress": progress,
			"description": "reconciling", "lastUpdateTime": "2026-11-22T09:00:00Z",
		}
	})
}

// Inventory is the ServerInventory named name that a pool function composes
// for the servers carrying selector, with the pool's own ServerClaims
// prefixed claimPrefix ("" before the Shoot has a technical ID).
func Inventory(name string, selector map[string]string, claimPrefix string) string {
	fp := map[string]any{"serverSelector": selector}
	if claimPrefix != "" {
		fp["claimNamePrefix"] = claimPrefix
	}
	return mustJSON(map[string]any{
		"apiVersion": ironcorev1alpha1.SchemeGroupVersion.String(), "kind": ironcorev1alpha1.ServerInventoryKind,
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"providerConfigRef": map[string]any{"name": "ironcore-metal"}, "forProvider": fp},
	})
}

// ObservedInventory is a Ready ServerInventory named name that counted o.
func ObservedInventory(name string, o ironcorev1alpha1.ServerInventoryObservation) string {
	return mustJSON(map[string]any{
		"apiVersion": ironcorev1alpha1.SchemeGroupVersion.String(), "kind": ironcorev1alpha1.ServerInventoryKind,
		"metadata": map[string]any{"name": name},
		"status": map[string]any{
			"atProvider": o,
			"conditions": []any{map[string]any{"type": "Ready", "status": "True", "reason": "Available", "lastTransitionTime": "2026-11-22T08:00:00Z"}},
		},
	})
}

// Counted adds to a response what a pool function adds once its inventory
// counted o: the desired ServerInventory (JSON), the inventory condition
// (before the others) and status.inventory.
func Counted(rsp *fnv1.RunFunctionResponse, inventory string, o ironcorev1alpha1.ServerInventoryObservation, cond *fnv1.Condition) *fnv1.RunFunctionResponse {
	rsp.Desired.Resources["inventory"] = Composed(inventory, true)
	rsp.Conditions = append([]*fnv1.Condition{cond}, rsp.Conditions...)
	status := rsp.Desired.Composite.Resource.AsMap()["status"].(map[string]any) //nolint:forcetypeassert // Response always sets it.
	status["inventory"] = map[string]any{
		"servers": o.Servers, "available": o.Available, "usable": o.Usable, "claimedByOthers": o.ClaimedByOthers, "failed": o.Failed,
		"capacity": map[string]any{"vcpus": o.UsableCapacity.CPUs, "memoryGB": o.UsableCapacity.MemoryGiB},
	}
	rsp.Desired.Composite.Resource = resource.MustStructJSON(mustJSON(map[string]any{"status": status}))
	return rsp
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// Withheld marks a response's composite not ready, as a pool function does
// while the inventory holds its Shoot back.
func Withheld(rsp *fnv1.RunFunctionResponse) *fnv1.RunFunctionResponse {
	rsp.Desired.Composite.Ready = fnv1.Ready_READY_FALSE
	return rsp
}

// ClusterRun adds to the response a test expects of a cluster function for
// req what every run with valid ShootSettings adds: the requirement of the
// landscape's CloudProfile and, when it sets the composite's status, the
// zones the cluster runs in (the composite's spec.zones; tests of defaulted
// zones spell them out). A run that refused its ShootSettings requires
// nothing: it cannot tell which CloudProfile.
func ClusterRun(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse) *fnv1.RunFunctionResponse {
	for _, r := range rsp.GetResults() {
		if strings.HasPrefix(r.GetMessage(), "invalid ShootSettings") {
			return rsp
		}
	}
	rsp = Requiring(rsp, "cloud-profile", "core.gardener.cloud/v1beta1", "CloudProfile", "ironcore-metal")
	// And its namesakes, by the name clouds know it by.
	xr := pool.NamesakeOf(req.GetObserved().GetComposite().GetResource())
	for key, sel := range map[string]*fnv1.ResourceSelector{
		pool.RequirementNamesakes: {ApiVersion: xr.APIVersion, Kind: xr.Kind,
			Match: &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: map[string]string{"crossplane.io/claim-name": xr.Name}}}},
		pool.RequirementNamesakeComposite: {ApiVersion: xr.APIVersion, Kind: xr.Kind, Match: &fnv1.ResourceSelector_MatchName{MatchName: xr.Name}},
	} {
		rsp.Requirements.Resources[key] = sel
		rsp.Requirements.ExtraResources[key] = sel //nolint:staticcheck // Crossplane 1.x
	}
	status := rsp.GetDesired().GetComposite().GetResource().GetFields()["status"].GetStructValue()
	if status == nil {
		return rsp
	}
	// And the name of its Shoot: the one composed, or the one it will have.
	if _, ok := status.GetFields()["shootName"]; !ok {
		name := gardener.ShootName(input.DefaultProjectNamespace, xr.Name)
		if shoot := rsp.GetDesired().GetResources()[string(pool.ResourceShoot)]; shoot != nil {
			name = shoot.GetResource().GetFields()["metadata"].GetStructValue().GetFields()["name"].GetStringValue()
		}
		status.Fields["shootName"] = structpb.NewStringValue(name)
	}
	zones := req.GetObserved().GetComposite().GetResource().GetFields()["spec"].GetStructValue().GetFields()["zones"]
	if zones == nil {
		return rsp
	}
	if _, ok := status.GetFields()["zones"]; !ok {
		status.Fields["zones"] = zones
	}
	return rsp
}

// SharesRun adds to the response a test expects of a pool function what
// every run that gets past its spec adds: the requirement of the pool's
// share records and, once it composes, its shares (none, where the test
// supplies no records), status (the pool's fields with what it shares
// out, such as allocatedNodes 0) and the Allocation condition.
func SharesRun(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, u pool.Unit, capacity int64, status map[string]float64) *fnv1.RunFunctionResponse {
	if FatalOf(rsp) != "" {
		return rsp
	}
	xr := req.GetObserved().GetComposite().GetResource().GetFields()
	name := xr["spec"].GetStructValue().GetFields()["name"].GetStringValue()
	if name == "" {
		// A claim's pool is named after the claim when spec.name is omitted.
		name = xr["metadata"].GetStructValue().GetFields()["labels"].GetStructValue().GetFields()["crossplane.io/claim-name"].GetStringValue()
	}
	sel := &fnv1.ResourceSelector{ApiVersion: "protection.crossplane.io/v1beta1", Kind: "ClusterUsage",
		Match: &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: map[string]string{pool.LabelUsedPool: name}}}}
	rsp.Requirements.Resources[pool.RequirementShares] = sel
	rsp.Requirements.ExtraResources[pool.RequirementShares] = sel //nolint:staticcheck // Crossplane 1.x
	st := rsp.GetDesired().GetComposite().GetResource().GetFields()["status"].GetStructValue()
	if st == nil {
		return rsp
	}
	st.Fields["shares"] = structpb.NewListValue(&structpb.ListValue{})
	// Whether the pool is dedicated, by spec.dedicated; a test of
	// spec.labels.dedicated says so itself.
	if _, ok := st.GetFields()["dedicated"]; !ok {
		spec := req.GetObserved().GetComposite().GetResource().GetFields()["spec"].GetStructValue()
		st.Fields["dedicated"] = structpb.NewBoolValue(spec.GetFields()["dedicated"].GetBoolValue())
	}
	for k, v := range status {
		st.Fields[k] = structpb.NewNumberValue(v)
	}
	rsp.Conditions = append(rsp.Conditions, Condition(pool.ConditionAllocation, fnv1.Status_STATUS_CONDITION_TRUE, "Decided", fmt.Sprintf("0 of %d %s allocated to 0 cloud(s)", capacity, u.Noun)))
	return rsp
}

// PoolUsage is a cloud's ClusterUsage of a pool (its composite of kind, the
// pool named pool) with the share record of annotations, as a cloud's
// function composes it and Crossplane supplies it to the pool's.
func PoolUsage(pool, kind, composite, cloud string, annotations map[string]string) string {
	return mustJSON(map[string]any{
		"apiVersion": "protection.crossplane.io/v1beta1", "kind": "ClusterUsage",
		"metadata": map[string]any{"name": cloud + "-usage", "creationTimestamp": "2026-11-20T00:00:00Z", "labels": map[string]any{"c5c3.io/used-pool": pool}, "annotations": annotations},
		"spec": map[string]any{
			"of": map[string]any{"apiVersion": "crossplane.c5c3.io/v1alpha1", "kind": kind, "resourceRef": map[string]any{"name": composite}},
			"by": map[string]any{"apiVersion": "crossplane.c5c3.io/v1alpha1", "kind": "XOpenStackCluster", "resourceRef": map[string]any{"name": cloud}},
		},
	})
}
