package gardenerstandin

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/c5c3/consumer-plane/internal/gardener"
)

func TestFirstWorkerNodes(t *testing.T) {
	shoot := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"provider": map[string]any{"workers": []any{
		map[string]any{"name": "hypervisor", "minimum": int64(50), "zones": []any{"a", "b"}, "labels": map[string]any{"c5c3.io/pool": "hv-pool-a"}},
	}}}}}
	w := FirstWorker(shoot)
	for _, tc := range []struct {
		name      string
		w         Worker
		max       int
		wantZones []string
	}{
		{name: "bounded by -shoot-nodes", w: w, max: 3, wantZones: []string{"a", "b", "a"}},
		{name: "bounded by the machines", w: Worker{Zones: []string{"a"}, Machines: 2}, max: 3, wantZones: []string{"a", "a"}},
		{name: "at least one", w: Worker{}, max: 0, wantZones: []string{""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nodes := tc.w.Nodes("garden-c5c3.p", tc.max)
			if len(nodes) != len(tc.wantZones) {
				t.Fatalf("%d nodes, want %d", len(nodes), len(tc.wantZones))
			}
			for i, n := range nodes {
				if n.Labels[corev1.LabelTopologyZone] != tc.wantZones[i] {
					t.Errorf("node %d zone %q, want %q", i, n.Labels[corev1.LabelTopologyZone], tc.wantZones[i])
				}
			}
		})
	}
	if n := w.Nodes("k", 2); n[1].Name != "k-node-1" || n[1].Labels["c5c3.io/pool"] != "hv-pool-a" {
		t.Errorf("node 1: %s %v", n[1].Name, n[1].Labels)
	}
	// Each node has its own labels: a zone set on one is not on another.
	if n := w.Nodes("k", 2); n[0].Labels[corev1.LabelTopologyZone] == n[1].Labels[corev1.LabelTopologyZone] {
		t.Errorf("nodes share their labels map: %v %v", n[0].Labels, n[1].Labels)
	}
}

// TestCRDsOfAKind: a Shoot gets the CRD directories of its pool kind and
// those every Shoot gets; a Shoot the pool functions did not label gets all.
func TestCRDsOfAKind(t *testing.T) {
	c := &Clusters{crds: []CRDs{ParseCRDs("storage=rook"), ParseCRDs("control-plane=c5c3"), ParseCRDs("agents")}}
	for kind, want := range map[string][]string{
		"storage":    {"rook", "agents"},
		"hypervisor": {"agents"},
		"":           {"rook", "c5c3", "agents"},
	} {
		if got := c.dirs(kind); !slices.Equal(got, want) {
			t.Errorf("dirs(%q) = %v, want %v", kind, got, want)
		}
	}
	shoot := &unstructured.Unstructured{}
	shoot.SetLabels(map[string]string{gardener.LabelPoolKind: "storage"})
	shoot.SetUID("u-1")
	if s := SpecOf(shoot); s.Kind != "storage" || s.UID != "u-1" {
		t.Errorf("SpecOf = %+v, want kind storage, uid u-1", s)
	}
}

func TestParseSpare(t *testing.T) {
	for v, want := range map[string]Spare{"storage=5": {Kind: "storage", N: 5}, "control-plane=0": {Kind: "control-plane"}} {
		if got, err := ParseSpare(v); err != nil || got != want {
			t.Errorf("ParseSpare(%q) = %+v, %v; want %+v", v, got, err, want)
		}
	}
	for _, v := range []string{"storage", "storage=", "storage=-1", "storage=five"} {
		if _, err := ParseSpare(v); err == nil {
			t.Errorf("ParseSpare(%q): no error", v)
		}
	}
}
