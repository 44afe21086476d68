package pool

import (
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
	"github.com/google/go-cmp/cmp"

	input "github.com/c5c3/consumer-plane/apis/input/v1alpha1"
)

// TestPlaceLayer: a reachable hypervisor pool gets its layer from Flux,
// with two resources whatever the layer holds: the Kustomization applying
// the layer's path into the pool's cluster with the pool's kubeconfig, and
// the binding of the identity it applies as there. Neither gates a
// hypervisor pool (TestPlaceLayerControlPlane: a control-plane cluster's
// layer does; a storage pool's too).
func TestPlaceLayer(t *testing.T) {
	s := &input.ShootSettings{}
	s.Default()
	desired := map[resource.Name]*resource.DesiredComposed{}
	a := Access{Kind: KindHypervisor, Name: "hv-pool-a", SecretNamespace: "crossplane-system"}
	if err := PlaceLayer(desired, nil, a, s); err != nil {
		t.Fatal(err)
	}
	if len(desired) != 2 {
		t.Fatalf("%d resources composed (%v), want the layer's Kustomization and its binding", len(desired), names(desired))
	}
	for n, d := range desired {
		if d.Ready != resource.ReadyTrue {
			t.Errorf("%s must not gate the pool's readiness: Ready=%v", n, d.Ready)
		}
	}
	k := desired[ResourceLayer].Resource.Object
	spec := k["spec"].(map[string]any)
	got := map[string]any{
		"kind": k["kind"], "name": k["metadata"].(map[string]any)["name"], "namespace": k["metadata"].(map[string]any)["namespace"],
		"sourceRef": spec["sourceRef"], "path": spec["path"], "kubeConfig": spec["kubeConfig"],
		"serviceAccountName": spec["serviceAccountName"], "deletionPolicy": spec["deletionPolicy"], "images": len(spec["images"].([]any)),
	}
	want := map[string]any{
		"kind": "Kustomization", "name": "hypervisor-hv-pool-a-layer", "namespace": "crossplane-system",
		"sourceRef":          map[string]any{"kind": "GitRepository", "name": "cobaltcore-cluster-layers"},
		"path":               "./clusters/pools/hypervisor",
		"kubeConfig":         map[string]any{"secretRef": map[string]any{"name": "hypervisor-hv-pool-a-kubeconfig", "key": "kubeconfig"}},
		"serviceAccountName": "cobaltcore-cluster-layer",
		// What a Composition stops composing stays in the cluster: the
		// layer's CRDs hold the agents' reports.
		"deletionPolicy": "Orphan",
		// hypervisor-, ha- and ovs-agent.
		"images": 3,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("layer -want +got:\n%s", d)
	}

	b := desired[ResourceLayerAccess].Resource.Object
	bspec := b["spec"].(map[string]any)
	manifest := bspec["forProvider"].(map[string]any)["manifest"].(map[string]any)
	got = map[string]any{"providerConfigRef": bspec["providerConfigRef"], "kind": manifest["kind"], "subjects": manifest["subjects"]}
	want = map[string]any{
		"providerConfigRef": map[string]any{"name": "hypervisor-hv-pool-a"},
		"kind":              "ClusterRoleBinding",
		// Flux impersonates system:serviceaccount:<the Kustomization's
		// namespace>:<serviceAccountName> in the pool's cluster.
		"subjects": []any{map[string]any{"kind": "ServiceAccount", "name": "cobaltcore-cluster-layer", "namespace": "crossplane-system"}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("layer access -want +got:\n%s", d)
	}

	desired = map[resource.Name]*resource.DesiredComposed{}
	if err := PlaceLayer(desired, nil, Access{Kind: KindStorage, Name: "st-pool-a", SecretNamespace: "crossplane-system"}, s); err != nil {
		t.Fatal(err)
	}
	if p := desired[ResourceLayer].Resource.Object["spec"].(map[string]any)["path"]; p != "./clusters/pools/storage" {
		t.Errorf("a storage pool's layer is %v, want ./clusters/pools/storage", p)
	}
}

// TestPlaceLayerControlPlane: a control-plane cluster's layer (the c5c3
// ControlPlane CRD, no agents) gates its readiness until Flux applied it
// once, at any revision, whatever its later runs say.
func TestPlaceLayerControlPlane(t *testing.T) {
	s := &input.ShootSettings{}
	s.Default()
	a := Access{Kind: KindControlPlane, Name: "cp-eu-de-1", SecretNamespace: "crossplane-system"}
	layer := func(status map[string]any) map[resource.Name]resource.ObservedComposed {
		o := composed.New()
		o.Object["status"] = status
		return map[resource.Name]resource.ObservedComposed{ResourceLayer: {Resource: o}}
	}
	for name, tc := range map[string]struct {
		observed map[resource.Name]resource.ObservedComposed
		want     resource.Ready
	}{
		"NotObserved": {want: resource.ReadyFalse},
		"NotApplied":  {observed: layer(map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "Unknown"}}}), want: resource.ReadyFalse},
		"Applied":     {observed: layer(map[string]any{"lastAppliedRevision": "main@sha1:abc"}), want: resource.ReadyTrue},
		"LastRunFailed": {observed: layer(map[string]any{"lastAppliedRevision": "main@sha1:abc",
			"conditions": []any{map[string]any{"type": "Ready", "status": "False", "reason": "ReconciliationFailed"}}}), want: resource.ReadyTrue},
	} {
		t.Run(name, func(t *testing.T) {
			desired := map[resource.Name]*resource.DesiredComposed{}
			if err := PlaceLayer(desired, tc.observed, a, s); err != nil {
				t.Fatal(err)
			}
			k := desired[ResourceLayer]
			if k == nil || desired[ResourceLayerAccess] == nil {
				t.Fatalf("composed %v, want the layer and its access", names(desired))
			}
			if k.Ready != tc.want {
				t.Errorf("the layer's Ready is %v, want %v", k.Ready, tc.want)
			}
			spec := k.Resource.Object["spec"].(map[string]any)
			if spec["path"] != "./clusters/control-plane" || k.Resource.GetName() != "controlplane-cp-eu-de-1-layer" {
				t.Errorf("Kustomization %s applies %v, want controlplane-cp-eu-de-1-layer applying ./clusters/control-plane", k.Resource.GetName(), spec["path"])
			}
			if _, ok := spec["images"]; ok {
				t.Errorf("a control-plane cluster runs no agent, yet its layer overrides images %v", spec["images"])
			}
		})
	}
	if err := PlaceLayer(map[resource.Name]*resource.DesiredComposed{}, nil, Access{Kind: "metal", Name: "x"}, s); err == nil {
		t.Error("a layer composed for a kind of cluster that has none")
	}
}

func names(m map[resource.Name]*resource.DesiredComposed) []string {
	var out []string
	for n := range m {
		out = append(out, string(n))
	}
	return out
}

// TestSetLayerCondition: the pool says whether Flux applied its layer, in
// Flux's words when it did not.
func TestSetLayerCondition(t *testing.T) {
	s := &input.ShootSettings{}
	s.Default()
	desired := map[resource.Name]*resource.DesiredComposed{}
	if err := PlaceLayer(desired, nil, Access{Kind: KindHypervisor, Name: "hv-pool-a", SecretNamespace: "crossplane-system"}, s); err != nil {
		t.Fatal(err)
	}
	observed := func(ready map[string]any, rev string) map[resource.Name]resource.ObservedComposed {
		o := composed.New()
		o.Object["status"] = map[string]any{"conditions": []any{ready}, "lastAppliedRevision": rev}
		return map[resource.Name]resource.ObservedComposed{ResourceLayer: {Resource: o}}
	}
	for name, tc := range map[string]struct {
		desired  map[resource.Name]*resource.DesiredComposed
		observed map[resource.Name]resource.ObservedComposed
		want     string // status reason: message; "" for no condition
	}{
		"NotPlaced": {desired: map[resource.Name]*resource.DesiredComposed{}},
		"Pending":   {desired: desired, want: "STATUS_CONDITION_FALSE Pending: Kustomization crossplane-system/hypervisor-hv-pool-a-layer is being created"},
		"FirstApply": {desired: desired, observed: observed(map[string]any{"type": "Ready", "status": "Unknown", "reason": "Progressing", "message": "Reconciliation in progress"}, ""),
			want: "STATUS_CONDITION_FALSE Pending: Kustomization crossplane-system/hypervisor-hv-pool-a-layer has not applied the layer yet: Reconciliation in progress"},
		"Applied": {desired: desired, observed: observed(map[string]any{"type": "Ready", "status": "True", "reason": "ReconciliationSucceeded"}, "main@sha1:abc"),
			want: "STATUS_CONDITION_TRUE Applied: Kustomization crossplane-system/hypervisor-hv-pool-a-layer applied the layer at main@sha1:abc"},
		// Flux marks every run Progressing: an applied layer stays True.
		"AppliedRunningAgain": {desired: desired, observed: observed(map[string]any{"type": "Ready", "status": "Unknown", "reason": "Progressing"}, "main@sha1:abc"),
			want: "STATUS_CONDITION_TRUE Applied: Kustomization crossplane-system/hypervisor-hv-pool-a-layer applied the layer at main@sha1:abc; Flux is applying it again"},
		"Failed": {desired: desired, observed: observed(map[string]any{"type": "Ready", "status": "False", "reason": "ReconciliationFailed", "message": "ClusterRoleBinding/x forbidden"}, "main@sha1:abc"),
			want: "STATUS_CONDITION_FALSE ReconciliationFailed: Kustomization crossplane-system/hypervisor-hv-pool-a-layer: ClusterRoleBinding/x forbidden"},
	} {
		t.Run(name, func(t *testing.T) {
			rsp := &fnv1.RunFunctionResponse{}
			SetLayerCondition(rsp, tc.desired, tc.observed)
			got := ""
			for _, c := range rsp.GetConditions() {
				if c.GetType() == ConditionLayerApplied {
					got = c.GetStatus().String() + " " + c.GetReason() + ": " + c.GetMessage()
				}
			}
			if got != tc.want {
				t.Errorf("LayerApplied %q, want %q", got, tc.want)
			}
		})
	}
}
