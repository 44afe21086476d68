package agentbundle

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestObjects(t *testing.T) {
	for set, want := range map[Set]map[string]int{
		Hypervisor: {"DaemonSet": 3, "NetworkPolicy": 3, "ClusterRole": 3, "ClusterRoleBinding": 3, "ServiceAccount": 3, "ConfigMap": 1, "Namespace": 1,
			"CustomResourceDefinition": 1, "ValidatingAdmissionPolicy": 1, "ValidatingAdmissionPolicyBinding": 1},
		Storage: {"DaemonSet": 1, "NetworkPolicy": 1, "ClusterRole": 1, "ClusterRoleBinding": 1, "ServiceAccount": 1, "Role": 1, "RoleBinding": 1, "CustomResourceDefinition": 1},
	} {
		objs, err := Objects(set, Images{})
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
	if _, err := Objects("gpu", Images{}); err == nil {
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

// TestImages: every agent's image follows the build's version by default,
// and a landscape's registry and tag when given; no image is left pointing
// elsewhere.
func TestImages(t *testing.T) {
	images := func(set Set, i Images) []string {
		objs, err := Objects(set, i)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, o := range objs {
			spec, _ := o.Object["spec"].(map[string]any)
			tmpl, _ := spec["template"].(map[string]any)
			pod, _ := tmpl["spec"].(map[string]any)
			for _, key := range []string{"initContainers", "containers"} {
				cs, _ := pod[key].([]any)
				for _, c := range cs {
					out = append(out, c.(map[string]any)["image"].(string))
				}
			}
		}
		return out
	}
	old := Version
	t.Cleanup(func() { Version = old })
	Version = "v1.2.3"
	for set, want := range map[Set][]string{
		Hypervisor: {"xpkg.c5c3.io/cobaltcore/hypervisor-agent:v1.2.3", "xpkg.c5c3.io/cobaltcore/ha-agent:v1.2.3", "xpkg.c5c3.io/cobaltcore/ovs-agent:v1.2.3"},
		Storage:    {"xpkg.c5c3.io/cobaltcore/storage-agent:v1.2.3"},
	} {
		got := images(set, Images{})
		if len(got) != len(want) {
			t.Fatalf("%s: images %v, want %v", set, got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("%s: image %q, want %q", set, got[i], want[i])
			}
		}
	}
	for _, img := range images(Hypervisor, Images{Registry: "registry.landscape.example/mirror/cobaltcore", Tag: "v1.2.4"}) {
		if !strings.HasPrefix(img, "registry.landscape.example/mirror/cobaltcore/") || !strings.HasSuffix(img, "-agent:v1.2.4") {
			t.Errorf("relocated image %q", img)
		}
	}
}

// TestContainersConfined: every agent container runs with the runtime's
// syscall filter, no capability, no privilege escalation and a read-only
// root, and only the agents whose node socket is root's run as root: the
// HA agent (libvirt's read-write socket) and the OVS agent (ovsdb-server's).
func TestContainersConfined(t *testing.T) {
	root := map[string]bool{"ha-agent": true, "ovs-agent": true}
	for _, set := range []Set{Hypervisor, Storage} {
		objs, err := Objects(set, Images{})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			if o.Object["kind"] != "DaemonSet" {
				continue
			}
			pod := o.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
			for _, c := range pod["containers"].([]any) {
				c := c.(map[string]any)
				sc, _ := c["securityContext"].(map[string]any)
				where := o.Name + "/" + c["name"].(string)
				if p, _ := sc["seccompProfile"].(map[string]any); p["type"] != "RuntimeDefault" {
					t.Errorf("%s: seccompProfile %v, want RuntimeDefault", where, sc["seccompProfile"])
				}
				if sc["allowPrivilegeEscalation"] != false || sc["readOnlyRootFilesystem"] != true {
					t.Errorf("%s: allowPrivilegeEscalation %v, readOnlyRootFilesystem %v; want false, true", where, sc["allowPrivilegeEscalation"], sc["readOnlyRootFilesystem"])
				}
				caps, _ := sc["capabilities"].(map[string]any)
				add, _ := caps["add"].([]any)
				drop, _ := caps["drop"].([]any)
				if len(add) > 0 || len(drop) != 1 || drop[0] != "ALL" {
					t.Errorf("%s: capabilities %v, want drop ALL and nothing added", where, caps)
				}
				name := o.Object["metadata"].(map[string]any)["name"].(string)
				if uid := fmt.Sprint(sc["runAsUser"]); uid == "<nil>" || (uid == "0") != root[name] {
					t.Errorf("%s: runAsUser %v; only %v run as root", where, sc["runAsUser"], root)
				}
			}
		}
	}
}

// TestOverrides: a pool's Kustomization overrides every agent image of its
// layer, once each, to the landscape's registry and tag (the build's
// version by default).
func TestOverrides(t *testing.T) {
	old := Version
	t.Cleanup(func() { Version = old })
	Version = "v1.2.3"
	got, err := Overrides(Hypervisor, Images{Registry: "registry.landscape.example/mirror"})
	if err != nil {
		t.Fatal(err)
	}
	want := []Image{
		{Name: "xpkg.c5c3.io/cobaltcore/hypervisor-agent", NewName: "registry.landscape.example/mirror/hypervisor-agent", NewTag: "v1.2.3"},
		{Name: "xpkg.c5c3.io/cobaltcore/ha-agent", NewName: "registry.landscape.example/mirror/ha-agent", NewTag: "v1.2.3"},
		{Name: "xpkg.c5c3.io/cobaltcore/ovs-agent", NewName: "registry.landscape.example/mirror/ovs-agent", NewTag: "v1.2.3"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("overrides %v, want %v", got, want)
	}
}
