package layout

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/c5c3/consumer-plane/tools/render"
)

// cloudCounts are the quota keys of the cloud claim, served in two groups:
// Kubernetes counts each on its own.
var cloudCounts = []string{"count/openstackclusters.crossplane.c5c3.io", "count/openstackclusters.c5c3.io"}

// TestTenantCloudsAreBounded: every tenant namespace of the example GitOps
// tree bounds its clouds across both groups the claim is served in (#52
// §13): a ResourceQuota names both, and only one of them is above zero, so
// its bound is the namespace's (3 in each group would be 6).
func TestTenantCloudsAreBounded(t *testing.T) {
	problems, tenants := bounded(filepath.Join(repoRoot(t), "examples"))
	if len(tenants) == 0 {
		t.Fatal("the examples have no tenant namespace (label c5c3.io/tenant)")
	}
	for _, p := range problems {
		t.Error(p)
	}
	t.Logf("tenant namespaces checked: %v", tenants)
}

// TestTenantCloudsRuleFails: the rule refuses stop 57's team-b (3 in each
// group) and a tenant namespace with no quota.
func TestTenantCloudsRuleFails(t *testing.T) {
	dir := t.TempDir()
	ns := func(name string) string {
		return "apiVersion: v1\nkind: Namespace\nmetadata: {name: " + name + ", labels: {c5c3.io/tenant: " + name + "}}\n"
	}
	files := map[string]string{
		"team-b.yaml": ns("team-b") + "---\napiVersion: v1\nkind: ResourceQuota\nmetadata: {name: cobaltcore-clouds, namespace: team-b}\n" +
			"spec: {hard: {count/openstackclusters.crossplane.c5c3.io: \"3\", count/openstackclusters.c5c3.io: \"3\"}}\n",
		"team-c.yaml": ns("team-c"),
		"team-d.yaml": ns("team-d") + "---\napiVersion: v1\nkind: ResourceQuota\nmetadata: {name: cobaltcore-clouds, namespace: team-d}\n" +
			"spec: {hard: {count/openstackclusters.crossplane.c5c3.io: \"3\"}}\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := bounded(dir)
	for _, want := range []string{
		"tenant namespace team-b may hold 3 clouds in crossplane.c5c3.io and 3 in c5c3.io: bound one group, set the other to 0",
		"tenant namespace team-c has no ResourceQuota bounding its clouds (count/openstackclusters.crossplane.c5c3.io and count/openstackclusters.c5c3.io)",
		"tenant namespace team-d's ResourceQuota cobaltcore-clouds leaves count/openstackclusters.c5c3.io unbounded",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("the rule does not say %q; it says %q", want, got)
		}
	}
}

// bounded returns what breaks the rule in the tree at dir, and the tenant
// namespaces it checked.
func bounded(dir string) (problems, tenants []string) {
	quotas := map[string][]*unstructured.Unstructured{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".yaml") {
			return err
		}
		objs, err := render.ReadObjects(p)
		if err != nil {
			return err
		}
		for _, o := range objs {
			switch {
			case o.GetAPIVersion() == "v1" && o.GetKind() == "Namespace" && o.GetLabels()["c5c3.io/tenant"] != "":
				tenants = append(tenants, o.GetName())
			case o.GetAPIVersion() == "v1" && o.GetKind() == "ResourceQuota":
				quotas[o.GetNamespace()] = append(quotas[o.GetNamespace()], o)
			}
		}
		return nil
	})
	if err != nil {
		return []string{err.Error()}, nil
	}
	sort.Strings(tenants)
	for _, ns := range tenants {
		problems = append(problems, boundedIn(ns, quotas[ns])...)
	}
	return problems, tenants
}

// boundedIn checks the quotas of one tenant namespace.
func boundedIn(ns string, quotas []*unstructured.Unstructured) []string {
	for _, q := range quotas {
		hard, _, _ := unstructured.NestedStringMap(q.Object, "spec", "hard")
		if hard[cloudCounts[0]] == "" && hard[cloudCounts[1]] == "" {
			continue
		}
		var above []string
		for _, k := range cloudCounts {
			v, ok := hard[k]
			if !ok {
				return []string{fmt.Sprintf("tenant namespace %s's ResourceQuota %s leaves %s unbounded", ns, q.GetName(), k)}
			}
			n, err := resource.ParseQuantity(v)
			if err != nil {
				return []string{fmt.Sprintf("tenant namespace %s's ResourceQuota %s: %s is %q, not a count", ns, q.GetName(), k, v)}
			}
			if !n.IsZero() {
				unit := " in "
				if len(above) == 0 {
					unit = " clouds in "
				}
				above = append(above, v+unit+strings.TrimPrefix(k, "count/openstackclusters."))
			}
		}
		if len(above) > 1 {
			return []string{fmt.Sprintf("tenant namespace %s may hold %s: bound one group, set the other to 0", ns, strings.Join(above, " and "))}
		}
		return nil
	}
	return []string{fmt.Sprintf("tenant namespace %s has no ResourceQuota bounding its clouds (%s and %s)", ns, cloudCounts[0], cloudCounts[1])}
}
