package pool

import (
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
	"github.com/google/go-cmp/cmp"

	input "github.com/c5c3/consumer-plane/apis/input/v1alpha1"
	"github.com/c5c3/consumer-plane/internal/agentbundle"
)

// TestPlaceAgents: a reachable pool gets its layer from Flux, with two
// resources whatever the layer holds: the Kustomization applying the
// layer's path into the pool's cluster with the pool's kubeconfig, and the
// binding of the identity it applies as there. Neither gates the pool.
func TestPlaceAgents(t *testing.T) {
	s := &input.ShootSettings{}
	s.Default()
	desired := map[resource.Name]*resource.DesiredComposed{}
	a := Access{Kind: KindHypervisor, Name: "hv-pool-a", SecretNamespace: "crossplane-system"}
	if err := PlaceAgents(desired, a, agentbundle.Hypervisor, s); err != nil {
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
	if err := PlaceAgents(desired, Access{Kind: KindStorage, Name: "st-pool-a", SecretNamespace: "crossplane-system"}, agentbundle.Storage, s); err != nil {
		t.Fatal(err)
	}
	if p := desired[ResourceLayer].Resource.Object["spec"].(map[string]any)["path"]; p != "./clusters/pools/storage" {
		t.Errorf("a storage pool's layer is %v, want ./clusters/pools/storage", p)
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
	if err := PlaceAgents(desired, Access{Kind: KindHypervisor, Name: "hv-pool-a", SecretNamespace: "crossplane-system"}, agentbundle.Hypervisor, s); err != nil {
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
