//go:build e2e

package e2e

import (
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var kustomizations = schema.GroupVersionResource{Group: "kustomize.toolkit.fluxcd.io", Version: "v1", Resource: "kustomizations"}

// TestGitOps: the tree came through Flux (e2e.sh's section G, its reads of
// the state up.sh left; the tenant's commits that follow stay in e2e.sh for
// now). up.sh applied nothing of examples/infrastructure or
// examples/tenants with kubectl: it committed examples/ to the local Git
// server and gave Flux the Kustomizations of clusters/management. Each is
// Ready at that commit, in their dependsOn order, and every example claim's
// fields are Flux's.
func TestGitOps(t *testing.T) {
	t.Run("G the tree came through Flux", treeFromFlux)
}

func treeFromFlux(t *testing.T) {
	ctx := t.Context()
	head, err := exec.CommandContext(ctx, "git", "-C", plane.path("gitops"), "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatalf("the demo's GitOps repository: %v", err)
	}
	demoRev := "main@sha1:" + strings.TrimSpace(string(head))
	l, err := plane.dyn.Resource(kustomizations).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("cannot list the Kustomizations: %v", err)
	}
	byName := map[string]unstructured.Unstructured{}
	for _, k := range l.Items {
		byName[k.GetNamespace()+"/"+k.GetName()] = k
	}
	platform := []string{"crossplane", "infrastructure-namespace", "infrastructure-eu-de-1-control-plane", "infrastructure-eu-de-1", "infrastructure-us-east-1-control-plane", "infrastructure-us-east-1",
		"tenant-team-a", "tenant-team-b", "tenant-internal", "tenant-finance"}
	tenants := []string{"team-a", "team-b", "internal", "finance"}
	var names []string
	for _, k := range platform {
		names = append(names, "flux-system/"+k)
	}
	for _, tn := range tenants {
		names = append(names, tn+"/openstack-clusters")
	}
	for _, n := range names {
		t.Run("Kustomization "+n+" is Ready at the demo's commit", func(t *testing.T) {
			k, ok := byName[n]
			if !ok {
				t.Fatalf("no Kustomization %s", n)
			}
			c, err := decode[conditioned](&k)
			if err != nil {
				t.Fatal(err)
			}
			ready := c.condition("Ready").Status
			if rev := nested(k.Object, "status", "lastAppliedRevision"); ready != "True" || rev != demoRev {
				t.Errorf("Ready %q at %q, want True at %s", ready, rev, demoRev)
			}
		})
	}
	// In their dependsOn order: each became Ready no earlier than what it
	// depends on. When each first reconciled: the earliest firstReconciled
	// of its history (with wait: true, once its health checks passed); the
	// Ready condition's transition time moves whenever Flux reconciles
	// again, so it says nothing of the first time.
	readyAt := func(n string) time.Time {
		k := byName[n]
		history, _, _ := unstructured.NestedSlice(k.Object, "status", "history")
		var first time.Time
		for _, h := range history {
			m, _ := h.(map[string]any)
			s, _ := m["firstReconciled"].(string)
			if at, err := time.Parse(time.RFC3339, s); err == nil && (first.IsZero() || at.Before(first)) {
				first = at
			}
		}
		return first
	}
	readyAfter := func(what, before, then string) {
		t.Run(what, func(t *testing.T) {
			a, b := readyAt(before), readyAt(then)
			if a.IsZero() || b.Before(a) {
				t.Errorf("%s Ready at %s, %s at %s", then, b, before, a)
			}
		})
	}
	for _, p := range [][2]string{
		{"crossplane", "infrastructure-namespace"}, {"infrastructure-namespace", "infrastructure-eu-de-1"}, {"infrastructure-namespace", "infrastructure-us-east-1"},
		{"infrastructure-namespace", "infrastructure-eu-de-1-control-plane"}, {"infrastructure-namespace", "infrastructure-us-east-1-control-plane"},
		{"infrastructure-eu-de-1-control-plane", "tenant-team-a"}, {"infrastructure-eu-de-1-control-plane", "tenant-team-b"},
		{"infrastructure-eu-de-1-control-plane", "tenant-internal"}, {"infrastructure-eu-de-1-control-plane", "tenant-finance"},
	} {
		readyAfter(p[1]+" became Ready after "+p[0], "flux-system/"+p[0], "flux-system/"+p[1])
	}
	for _, tn := range tenants {
		readyAfter(tn+"'s own Kustomization became Ready after the platform's tenant-"+tn, "flux-system/tenant-"+tn, tn+"/openstack-clusters")
	}
	// Every example claim was applied by Flux, none with kubectl. (Section
	// 0 applied the docs' pools with kubectl, as an operator would: they are
	// not examples.)
	var claims, bad []string
	// (Each a list of a resource in a namespace: a ref without a name.)
	lists := []ref{{gvr: controlPlaneClusters, namespace: "infrastructure"}, {gvr: hypervisorClusters, namespace: "infrastructure"}, {gvr: storageClusters, namespace: "infrastructure"}}
	for _, tn := range tenants {
		lists = append(lists, ref{gvr: openStackClusters, namespace: tn})
	}
	for _, li := range lists {
		l, err := plane.dyn.Resource(li.gvr).Namespace(li.namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatalf("cannot list %s in %s: %v", li.gvr.Resource, li.namespace, err)
		}
		for _, o := range l.Items {
			if slices.Contains([]string{"hv-pool-compliance", "st-pool-encrypted"}, o.GetName()) {
				continue
			}
			var managers []string
			for _, f := range o.GetManagedFields() {
				managers = append(managers, f.Manager)
			}
			n := fmt.Sprintf("%s %s/%s", o.GetKind(), o.GetNamespace(), o.GetName())
			claims = append(claims, n)
			if !slices.Contains(managers, "kustomize-controller") || slices.ContainsFunc(managers, func(m string) bool { return strings.Contains(m, "kubectl") }) {
				bad = append(bad, n+" ("+strings.Join(managers, ",")+")")
			}
		}
	}
	t.Run(fmt.Sprintf("every example claim (%d) was applied by Flux, none with kubectl", len(claims)), func(t *testing.T) {
		if len(claims) == 0 || len(bad) > 0 {
			t.Errorf("not applied by Flux alone: %v", bad)
		}
	})
}
