package agentbundle

import (
	"os"
	"path/filepath"
	"testing"
)

func TestObjects(t *testing.T) {
	for set, want := range map[Set]map[string]int{
		Hypervisor: {"DaemonSet": 3, "ClusterRole": 3, "ClusterRoleBinding": 3, "ServiceAccount": 3, "ConfigMap": 1, "Namespace": 1,
			"CustomResourceDefinition": 1, "ValidatingAdmissionPolicy": 1, "ValidatingAdmissionPolicyBinding": 1},
		Storage: {"DaemonSet": 1, "ClusterRole": 1, "ClusterRoleBinding": 1, "ServiceAccount": 1, "Role": 1, "RoleBinding": 1, "CustomResourceDefinition": 1},
	} {
		objs, err := Objects(set)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int{}
		names := map[string]bool{}
		for _, o := range objs {
			got[o.Object["kind"].(string)]++
			if names[o.Name] {
				t.Errorf("%s: name %s twice", set, o.Name)
			}
			names[o.Name] = true
		}
		for k, n := range want {
			if got[k] != n {
				t.Errorf("%s: %d %s, want %d (all: %v)", set, got[k], k, n, got)
			}
		}
		if len(got) != len(want) {
			t.Errorf("%s: kinds %v, want %v", set, got, want)
		}
	}
	if _, err := Objects("gpu"); err == nil {
		t.Fatal("an unknown set gave objects")
	}
}

// The embedded copies are the manifests of cluster/agents and the CRDs of
// cluster/crds/agents (make generate copies them; check-generate keeps them equal).
func TestCopiesAreCurrent(t *testing.T) {
	for _, set := range files {
		for _, f := range set {
			src := filepath.Join("..", "..", "cluster", "agents", f)
			if _, err := os.Stat(src); err != nil {
				src = filepath.Join("..", "..", "cluster", "crds", "agents", f)
			}
			want, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			got, err := manifests.ReadFile("manifests/" + f)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("manifests/%s differs from %s: run make generate", f, src)
			}
		}
	}
}
