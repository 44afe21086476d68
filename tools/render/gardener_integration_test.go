package render

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/c5c3/consumer-plane/local/garden"
	"github.com/c5c3/consumer-plane/test/kubetest"
)

// The garden a landscape's Gardener operator sets up: the project, its
// credentials, the CloudProfile, the registered extensions and the Seeds.
var gardenObjects = []string{
	filepath.Join(root, "local", "garden", "project.yaml"),
	filepath.Join(root, "local", "garden", "cloudprofile.yaml"),
	filepath.Join(root, "local", "garden", "controllerregistrations.yaml"),
	filepath.Join(root, "local", "garden", "seeds.yaml"),
}

func TestMain(m *testing.M) {
	code := kubetest.MainWithGarden(m, gardenObjects)
	stopFunctions()
	os.Exit(code)
}

// admitShoots submits every Shoot of a render's output to the real
// gardener-apiserver as a server-side dry-run create: Gardener's
// validation, defaulting and admission plugins (the CloudProfile's regions,
// zones, machine types, images and Kubernetes versions; the project; the
// registered extensions; the name's length) run in full, nothing is stored.
// It returns how many Shoots it submitted.
func admitShoots(t *testing.T, rendered []byte) int {
	t.Helper()
	dyn, err := dynamic.NewForConfig(kubetest.Config(t))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := ParseObjects(rendered)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, o := range objs {
		if o.GetKind() != "Shoot" || !strings.HasPrefix(o.GetAPIVersion(), "core.gardener.cloud/") {
			continue
		}
		n++
		if err := dryRunCreate(dyn, o); err != nil {
			t.Errorf("Gardener refuses the rendered Shoot %s/%s: %v", o.GetNamespace(), o.GetName(), err)
		}
	}
	return n
}

func dryRunCreate(dyn dynamic.Interface, o *unstructured.Unstructured) error {
	o = o.DeepCopy()
	// What a composed resource carries only once Crossplane created it.
	o.SetOwnerReferences(nil)
	_, err := dyn.Resource(garden.GVRShoots).Namespace(o.GetNamespace()).Create(context.Background(), o, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	return err
}

// TestGardenerRefusesIntegration: the admission check above is the real
// Gardener's, so it refuses what Gardener refuses, naming the field: a zone
// the region lacks, a machine type the CloudProfile does not offer, and a
// Shoot name that with the project's exceeds Gardener's 21 characters.
func TestGardenerRefusesIntegration(t *testing.T) {
	dyn, err := dynamic.NewForConfig(kubetest.Config(t))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := ReadObjects(filepath.Join("testdata", "golden", "observed", "hypervisorcluster-shoot-ready.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var shoot *unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "Shoot" {
			shoot = o
		}
	}
	if shoot == nil {
		t.Fatal("the golden render hypervisorcluster-shoot-ready has no Shoot")
	}
	if err := dryRunCreate(dyn, shoot); err != nil {
		t.Fatalf("the unchanged Shoot must be admitted: %v", err)
	}
	// The first worker, in place (NestedSlice would return a copy).
	worker := func(s *unstructured.Unstructured) map[string]any {
		return s.Object["spec"].(map[string]any)["provider"].(map[string]any)["workers"].([]any)[0].(map[string]any)
	}
	cases := map[string]struct {
		change func(*unstructured.Unstructured)
		want   string
	}{
		"a zone the region lacks": {
			change: func(s *unstructured.Unstructured) { worker(s)["zones"] = []any{"eu-de-1a", "eu-de-1d"} },
			want:   `spec.provider.workers[0].zones[1]: Unsupported value: "eu-de-1d"`,
		},
		"a machine type the CloudProfile lacks": {
			change: func(s *unstructured.Unstructured) { worker(s)["machine"].(map[string]any)["type"] = "baremetal-huge" },
			want:   `spec.provider.workers[0].machine.type: Unsupported value: "baremetal-huge"`,
		},
		"a name too long for the project": {
			change: func(s *unstructured.Unstructured) { s.SetName("hv-pool-with-a-long-name") },
			want:   "the length of the shoot name and the project name must not exceed 21 characters",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := shoot.DeepCopy()
			tc.change(s)
			err := dryRunCreate(dyn, s)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Gardener should refuse with %q, got %v", tc.want, err)
			}
		})
	}
}
