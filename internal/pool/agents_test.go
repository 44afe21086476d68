package pool

import (
	"testing"

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/google/go-cmp/cmp"

	"github.com/c5c3/consumer-plane/internal/agentbundle"
)

func TestPlaceAgents(t *testing.T) {
	desired := map[resource.Name]*resource.DesiredComposed{}
	a := Access{Kind: KindHypervisor, Name: "hv-pool-a"}
	if err := PlaceAgents(desired, a, agentbundle.Hypervisor, agentbundle.Images{}); err != nil {
		t.Fatal(err)
	}
	if len(desired) != 20 {
		t.Fatalf("%d objects placed, want the bundle's 20 (each agent with its NetworkPolicy)", len(desired))
	}
	ds, ok := desired["agent-daemonset-hypervisor-agent"]
	if !ok {
		t.Fatalf("no hypervisor agent DaemonSet among %v", names(desired))
	}
	if ds.Ready != resource.ReadyTrue {
		t.Fatalf("agent Objects must not gate the pool's readiness: Ready=%v", ds.Ready)
	}
	o := ds.Resource.Object
	spec := o["spec"].(map[string]any)
	manifest := spec["forProvider"].(map[string]any)["manifest"].(map[string]any)
	got := map[string]any{
		"kind": o["kind"], "name": o["metadata"].(map[string]any)["name"], "providerConfigRef": spec["providerConfigRef"], "readiness": spec["readiness"],
		"manifestKind": manifest["kind"], "manifestNamespace": manifest["metadata"].(map[string]any)["namespace"],
	}
	want := map[string]any{
		"kind": "Object", "name": "hypervisor-hv-pool-a-agent-daemonset-hypervisor-agent",
		"providerConfigRef": map[string]any{"name": "hypervisor-hv-pool-a"},
		// A DaemonSet has no Ready condition: applied is placed.
		"readiness":    map[string]any{"policy": "SuccessfulCreate"},
		"manifestKind": "DaemonSet", "manifestNamespace": "c5c3-agents",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("-want +got:\n%s", d)
	}
}

func names(m map[resource.Name]*resource.DesiredComposed) []string {
	var out []string
	for n := range m {
		out = append(out, string(n))
	}
	return out
}
