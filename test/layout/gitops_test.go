package layout

import (
	"cmp"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/c5c3/consumer-plane/tools/render"
)

// fluxKustomization is what the rule reads of a Flux Kustomization.
type fluxKustomization struct{ namespace, name, path string }

// fluxNamespace is where the platform's Kustomizations live (they apply as
// Flux's own, cluster-admin identity); a Kustomization in any other
// namespace is a tenant's, applying as the tenant.
const fluxNamespace = "flux-system"

// TestTenantFoldersAreApartFromThePlatforms: in the example GitOps tree, what
// a tenant writes and what the platform applies as cluster-admin live
// apart (#52 §8). No tenant Kustomization's path lies in or above a
// platform Kustomization's, no platform kustomization.yaml lists a
// resource in a tenant's path, and every file in a tenant's path is a
// claim: write access to a tenant's folder is never write access to what
// the platform applies.
func TestTenantFoldersAreApartFromThePlatforms(t *testing.T) {
	for _, problem := range apart(filepath.Join(repoRoot(t), "examples")) {
		t.Error(problem)
	}
}

// TestTenantFoldersRuleFails: the rule above refuses the layout it was made
// against (stop 57's examples), where a tenant's folder held its onboarding
// beside its claims.
func TestTenantFoldersRuleFails(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("clusters/management/tenants.yaml", "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: tenant-team-a, namespace: flux-system}\nspec: {path: ./tenants/team-a}\n")
	write("tenants/team-a/kustomization.yaml", "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [access.yaml, gitops.yaml]\n")
	write("tenants/team-a/access.yaml", "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: cobaltcore-tenant, namespace: team-a}\n")
	write("tenants/team-a/gitops.yaml", "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: openstack-clusters, namespace: team-a}\nspec: {path: ./tenants/team-a/openstack-clusters}\n")
	write("tenants/team-a/openstack-clusters/team-a-prod.yaml", "apiVersion: c5c3.io/v1alpha1\nkind: OpenStackCluster\nmetadata: {name: team-a-prod, namespace: team-a}\n")
	write("tenants/team-a/openstack-clusters/role.yaml", "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: mine}\n")
	got := apart(dir)
	for _, want := range []string{
		"tenant Kustomization team-a/openstack-clusters applies tenants/team-a/openstack-clusters, inside platform Kustomization flux-system/tenant-team-a's tenants/team-a",
		"tenants/team-a/openstack-clusters/role.yaml: ClusterRole in tenant Kustomization team-a/openstack-clusters's path: a tenant's path holds only claims",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("the rule does not say %q; it says %q", want, got)
		}
	}
}

// apart returns what breaks the rule in the GitOps tree at dir.
func apart(dir string) []string {
	var platform, tenant []fluxKustomization
	var problems []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".yaml") {
			return err
		}
		objs, err := render.ReadObjects(p)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		for _, o := range objs {
			if o.GetKind() != "Kustomization" || !strings.HasPrefix(o.GetAPIVersion(), "kustomize.toolkit.fluxcd.io/") {
				continue
			}
			kpath, _, _ := unstructured.NestedString(o.Object, "spec", "path")
			k := fluxKustomization{namespace: o.GetNamespace(), name: o.GetName(), path: path.Clean(strings.TrimPrefix(kpath, "./"))}
			if k.namespace == fluxNamespace {
				platform = append(platform, k)
			} else {
				tenant = append(tenant, k)
			}
		}
		return nil
	})
	if err != nil {
		return []string{err.Error()}
	}
	within := func(p, dir string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }
	for _, tk := range tenant {
		name := tk.namespace + "/" + tk.name
		for _, pk := range platform {
			pname := pk.namespace + "/" + pk.name
			switch {
			case within(tk.path, pk.path):
				problems = append(problems, fmt.Sprintf("tenant Kustomization %s applies %s, inside platform Kustomization %s's %s", name, tk.path, pname, pk.path))
			case within(pk.path, tk.path):
				problems = append(problems, fmt.Sprintf("platform Kustomization %s applies %s, inside tenant Kustomization %s's %s", pname, pk.path, name, tk.path))
			}
			for _, r := range resources(dir, pk.path) {
				if within(r, tk.path) {
					problems = append(problems, fmt.Sprintf("platform Kustomization %s applies %s, in tenant Kustomization %s's %s", pname, r, name, tk.path))
				}
			}
		}
		problems = append(problems, onlyClaims(dir, tk.path, name)...)
	}
	if len(tenant) == 0 {
		problems = append(problems, "no tenant Kustomization found: the rule checks nothing")
	}
	return problems
}

// resources are the paths (relative to dir) a kustomization.yaml in
// kdir lists, followed into the directories it lists.
func resources(dir, kdir string) []string {
	b, err := os.ReadFile(filepath.Join(dir, kdir, "kustomization.yaml")) //nolint:gosec // the repository's own file
	if err != nil {
		return nil
	}
	var k struct {
		Resources []string `json:"resources"`
	}
	if yaml.Unmarshal(b, &k) != nil {
		return nil
	}
	var out []string
	for _, r := range k.Resources {
		p := path.Clean(path.Join(kdir, r))
		out = append(out, p)
		if st, err := os.Stat(filepath.Join(dir, p)); err == nil && st.IsDir() {
			out = append(out, resources(dir, p)...)
		}
	}
	return out
}

// onlyClaims returns a problem for each object in a tenant's path that is
// not a claim (an OpenStackCluster of either group). Files
// kustomize-controller does not apply (a README.md that keeps the folder
// in Git) hold no objects.
func onlyClaims(dir, tpath, name string) []string {
	var problems []string
	_ = filepath.WalkDir(filepath.Join(dir, tpath), func(p string, d os.DirEntry, err error) error { //nolint:errcheck // a missing path is reported below
		if err != nil || d.IsDir() || !slices.Contains([]string{".yaml", ".yml", ".json"}, filepath.Ext(p)) {
			return err
		}
		rel, _ := filepath.Rel(dir, p) //nolint:errcheck // p is below dir
		objs, err := render.ReadObjects(p)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", rel, err))
			return nil
		}
		for _, o := range objs {
			if o.GetKind() != "OpenStackCluster" ||
				(!strings.HasPrefix(o.GetAPIVersion(), "crossplane.c5c3.io/") && !strings.HasPrefix(o.GetAPIVersion(), "c5c3.io/")) {
				problems = append(problems, fmt.Sprintf("%s: %s in tenant Kustomization %s's path: a tenant's path holds only claims", rel, cmp.Or(o.GetKind(), "a file that is no object"), name))
			}
		}
		return nil
	})
	if _, err := os.Stat(filepath.Join(dir, tpath)); err != nil {
		problems = append(problems, fmt.Sprintf("tenant Kustomization %s's path %s: %v", name, tpath, err))
	}
	return problems
}
