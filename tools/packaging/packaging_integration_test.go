// Package packaging checks the packages `make xpkg` builds
// (tools/packaging/build.sh): what each .xpkg holds is what Crossplane's
// package manager will read — the package metadata and objects in the layer
// labelled "base", and for functions and the provider the runtime image.
package packaging

import (
	"archive/tar"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	consumerv1alpha1 "github.com/c5c3/consumer-plane/apis/consumer/v1alpha1"
)

// dir is where `make xpkg` writes the packages.
var dir = filepath.Join("..", "..", "_output", "xpkg")

func TestPackagesIntegration(t *testing.T) {
	cases := map[string]struct {
		kind       string
		entrypoint string // "" for a package without a runtime image
		crds       []string
		others     map[string]int // kinds besides the metadata and CRDs, and how many
		depends    []string
	}{
		"function-controlplane-cluster": {kind: "Function", entrypoint: "/function", crds: []string{"shootsettings.input.crossplane.c5c3.io"}},
		"function-hypervisor-cluster":   {kind: "Function", entrypoint: "/function", crds: []string{"shootsettings.input.crossplane.c5c3.io"}},
		"function-storage-cluster":      {kind: "Function", entrypoint: "/function", crds: []string{"shootsettings.input.crossplane.c5c3.io"}},
		"function-openstack-cluster":    {kind: "Function", entrypoint: "/function", crds: []string{"cloudsettings.input.crossplane.c5c3.io"}},
		"provider-cobaltcore": {kind: "Provider", entrypoint: "/provider", crds: []string{
			"serverinventories.ironcore.provider.c5c3.io", "hypervisorinventories.kvm.provider.c5c3.io", "shootkubeconfigs.gardener.provider.c5c3.io", "pools.ceph.provider.c5c3.io",
			"secretcopies.kubernetes.provider.c5c3.io", "nodelabels.kubernetes.provider.c5c3.io",
			"aggregates.nova.provider.c5c3.io", "volumetypes.cinder.provider.c5c3.io", "projects.keystone.provider.c5c3.io",
			"users.keystone.provider.c5c3.io", "roleassignments.keystone.provider.c5c3.io", "applicationcredentials.keystone.provider.c5c3.io",
			"logicalswitches.ovn.provider.c5c3.io",
		}},
		"configuration-cobaltcore": {kind: "Configuration",
			// Every XRD of the consumer API, every Composition of package/.
			others: map[string]int{"CompositeResourceDefinition": len(consumerv1alpha1.Composites), "Composition": compositionFiles(t)},
			depends: []string{
				"xpkg.c5c3.io/cobaltcore/function-controlplane-cluster", "xpkg.c5c3.io/cobaltcore/function-hypervisor-cluster",
				"xpkg.c5c3.io/cobaltcore/function-storage-cluster", "xpkg.c5c3.io/cobaltcore/function-openstack-cluster",
				"xpkg.c5c3.io/cobaltcore/provider-cobaltcore", "xpkg.crossplane.io/crossplane-contrib/provider-kubernetes",
			},
		},
	}
	if testing.Short() {
		t.Skip("integration test: skipped with -short")
	}
	if _, err := os.Stat(dir); err != nil {
		msg := "needs the packages: run `make xpkg` (tools/packaging/build.sh)"
		if os.Getenv("REQUIRE_INTEGRATION") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join(dir, name+".xpkg")
			img, err := tarball.ImageFromPath(file, nil)
			if err != nil {
				t.Fatalf("%s is not an image tarball: %v", file, err)
			}
			cf, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(cf.Config.Entrypoint, " "); got != tc.entrypoint {
				t.Errorf("entrypoint %q, want %q", got, tc.entrypoint)
			}
			if tc.entrypoint != "" && cf.Config.User != "65532:65532" {
				t.Errorf("runs as %q, want the non-root 65532:65532", cf.Config.User)
			}

			// The package layer is the one the config labels "base".
			base := ""
			for k, v := range cf.Config.Labels {
				if v == "base" && strings.HasPrefix(k, "io.crossplane.xpkg:") {
					base = strings.TrimPrefix(k, "io.crossplane.xpkg:")
				}
			}
			if base == "" {
				t.Fatalf("no layer labelled base in %v", cf.Config.Labels)
			}
			objs := packageObjects(t, img, base)
			meta := objs[0]
			if meta.GetKind() != tc.kind || meta.GetName() != name {
				t.Fatalf("package metadata is %s %s, want %s %s", meta.GetKind(), meta.GetName(), tc.kind, name)
			}
			kinds, crds := map[string]int{}, map[string]bool{}
			for _, o := range objs[1:] {
				if o.GetKind() == "CustomResourceDefinition" {
					crds[o.GetName()] = true
					continue
				}
				kinds[o.GetKind()]++
			}
			for _, c := range tc.crds {
				if !crds[c] {
					t.Errorf("no CRD %s in the package (it has %d CRDs)", c, len(crds))
				}
			}
			if tc.others == nil {
				tc.others = map[string]int{}
			}
			for k, n := range tc.others {
				if kinds[k] != n {
					t.Errorf("%d %s objects, want %d", kinds[k], k, n)
				}
			}
			for k := range kinds {
				if _, ok := tc.others[k]; !ok {
					t.Errorf("unexpected %s objects in the package", k)
				}
			}
			var deps []string
			ds, _, _ := unstructured.NestedSlice(meta.Object, "spec", "dependsOn")
			for _, d := range ds {
				m, _ := d.(map[string]any)
				for _, k := range []string{"function", "provider", "configuration"} {
					if s, ok := m[k].(string); ok {
						deps = append(deps, s)
						// Dependency resolution takes the newest version a
						// constraint admits: without an upper bound a
						// breaking release would be installed unasked.
						if v, _ := m["version"].(string); !strings.Contains(v, "<") {
							t.Errorf("dependency %s has no upper bound: version %q", s, v)
						}
					}
				}
			}
			sort.Strings(deps)
			sort.Strings(tc.depends)
			if strings.Join(deps, " ") != strings.Join(tc.depends, " ") {
				t.Errorf("depends on %v, want %v", deps, tc.depends)
			}
			// What a registry and `crossplane xpkg` show of the package, and
			// the core versions it is tested with.
			a := meta.GetAnnotations()
			if a["meta.crossplane.io/license"] != "Apache-2.0" || strings.TrimSpace(a["meta.crossplane.io/readme"]) == "" {
				t.Errorf("license %q and readme %q, want Apache-2.0 and a readme", a["meta.crossplane.io/license"], a["meta.crossplane.io/readme"])
			}
			if v, _, _ := unstructured.NestedString(meta.Object, "spec", "crossplane", "version"); v != ">=v2.4.0, <v3.0.0" {
				t.Errorf("asks for Crossplane %q, want >=v2.4.0, <v3.0.0 (what the tests run)", v)
			}
		})
	}
}

// packageObjects reads the objects of package.yaml in the layer of the
// given digest.
func packageObjects(t *testing.T, img v1.Image, digest string) []*unstructured.Unstructured {
	t.Helper()
	h, err := v1.NewHash(digest)
	if err != nil {
		t.Fatal(err)
	}
	l, err := img.LayerByDigest(h)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := l.Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close() //nolint:errcheck // read only
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			t.Fatal("no package.yaml in the base layer")
		}
		if err != nil {
			t.Fatal(err)
		}
		if hdr.Name != "package.yaml" {
			continue
		}
		var objs []*unstructured.Unstructured
		dec := utilyaml.NewYAMLOrJSONDecoder(tr, 4096)
		for {
			u := &unstructured.Unstructured{}
			if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("package.yaml: %v", err)
			}
			if len(u.Object) > 0 {
				objs = append(objs, u)
			}
		}
		if len(objs) == 0 {
			t.Fatal("package.yaml is empty")
		}
		return objs
	}
}

// compositionFiles counts the Compositions the Configuration is built from.
func compositionFiles(t *testing.T) int {
	t.Helper()
	files, err := filepath.Glob("../../package/compositions/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no Compositions in package/compositions: %v", err)
	}
	return len(files)
}
