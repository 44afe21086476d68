package xrd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/consumer-plane/test/kubetest"
)

const claimCompositionPolicy = "crossplane/claim-composition-policy.yaml"

// TestTenantsCannotChooseTheirLimitsIntegration: with the shipped
// ValidatingAdmissionPolicy, the real kube-apiserver lets a tenant (an
// identity with only RBAC on claims in its namespace) select only the
// environments its namespace's annotation allows (production when it has
// none), by the environment label alone, and never set or change
// compositionRef, compositionRevisionRef or resourceRef; Crossplane core
// and the platform team may, as they must. Both groups a cloud is served in.
func TestTenantsCannotChooseTheirLimitsIntegration(t *testing.T) {
	ctx := setup(t)
	applyFile(ctx, t, claimCompositionPolicy)

	for _, o := range []string{
		`{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "env-prod"}}`,
		`{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "env-staging", "annotations": {"c5c3.io/environments": "staging, development"}}}`,
		`{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "env-tenant"},
		  "rules": [{"apiGroups": ["c5c3.io", "crossplane.c5c3.io"], "resources": ["openstackclusters"], "verbs": ["*"]}]}`,
		`{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "env-tenant"},
		  "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "env-tenant"},
		  "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "env-tenants"}]}`,
	} {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON([]byte(o)); err != nil {
			t.Fatal(err)
		}
		if err := kube.Create(ctx, u); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = kube.Delete(context.Background(), u) })
	}
	as := func(user string, groups ...string) client.Client {
		return impersonate(t, user, append(groups, "system:authenticated")...)
	}
	tenant := as("tenant", "env-tenants")
	crossplane := as("system:serviceaccount:crossplane-system:crossplane", "system:masters")
	platform := as("platform-engineer", "cobaltcore:platform", "env-tenants")

	n := 0
	claim := func(ns, group string, edits ...func(*unstructured.Unstructured)) *unstructured.Unstructured {
		n++
		u := example(t, cloud, fmt.Sprintf("env-cloud-%d", n))
		u.SetNamespace(ns)
		u.SetAPIVersion(group + "/v1alpha1")
		for _, f := range []string{"spec.compositionSelector", "spec.compositionUpdatePolicy"} {
			del(f)(u)
		}
		for _, e := range edits {
			e(u)
		}
		return u
	}
	selects := func(env string) func(*unstructured.Unstructured) {
		return set("spec.compositionSelector", map[string]any{"matchLabels": map[string]any{"crossplane.c5c3.io/environment": env}})
	}
	const (
		notAllowed = "may claim clouds of environment"
		notYours   = "spec.compositionRef, spec.compositionRevisionRef, spec.compositionRevisionSelector and spec.resourceRef are written by Crossplane and the platform team"
		onlyEnv    = "spec.compositionSelector.matchLabels may name only crossplane.c5c3.io/environment"
		dataPolicy = "spec.dataPolicy is the platform team's choice"
	)

	// A policy takes effect a moment after it is created.
	kubetest.Until(t, "the policy refuses a tenant's production cloud in a staging namespace", 30*time.Second, func() error {
		probe := claim("env-staging", "crossplane.c5c3.io")
		err := tenant.Create(ctx, probe)
		if err == nil {
			_ = kube.Delete(ctx, probe)
			return errors.New("admitted")
		}
		if !strings.Contains(err.Error(), notAllowed) {
			return fmt.Errorf("refused for another reason: %w", err)
		}
		return nil
	})

	for name, tc := range map[string]struct {
		c    client.Client
		obj  *unstructured.Unstructured
		want string // "" admitted
	}{
		"production, selected by nothing, where allowed":          {tenant, claim("env-prod", "c5c3.io"), ""},
		"production, selected, where allowed":                     {tenant, claim("env-prod", "crossplane.c5c3.io", selects("production")), ""},
		"staging where only production is allowed":                {tenant, claim("env-prod", "c5c3.io", selects("staging")), "namespace env-prod may claim clouds of environment production, not staging"},
		"staging where allowed":                                   {tenant, claim("env-staging", "c5c3.io", selects("staging")), ""},
		"development where allowed":                               {tenant, claim("env-staging", "crossplane.c5c3.io", selects("development")), ""},
		"production, selected by nothing, where not allowed":      {tenant, claim("env-staging", "c5c3.io"), "namespace env-staging may claim clouds of environment staging or development, not production"},
		"a selector with another label":                           {tenant, claim("env-prod", "c5c3.io", set("spec.compositionSelector", map[string]any{"matchLabels": map[string]any{"crossplane.c5c3.io/environment": "production", "tier": "gold"}})), onlyEnv},
		"a compositionRef":                                        {tenant, claim("env-staging", "c5c3.io", selects("staging"), set("spec.compositionRef", map[string]any{"name": "production.xopenstackclusters.c5c3.io"})), notYours},
		"a compositionRevisionRef":                                {tenant, claim("env-prod", "crossplane.c5c3.io", set("spec.compositionRevisionRef", map[string]any{"name": "production-abc"})), notYours},
		"a compositionRevisionSelector":                           {tenant, claim("env-prod", "c5c3.io", set("spec.compositionRevisionSelector", map[string]any{"matchLabels": map[string]any{"release": "old"}})), notYours},
		"a resourceRef":                                           {tenant, claim("env-prod", "c5c3.io", set("spec.resourceRef", map[string]any{"apiVersion": "c5c3.io/v1alpha1", "kind": "XOpenStackCluster", "name": "someone-elses"})), notYours},
		"the platform's staging cloud, in a production namespace": {platform, claim("env-prod", "c5c3.io", selects("staging")), ""},
		"the platform pinning a revision":                         {platform, claim("env-prod", "crossplane.c5c3.io", set("spec.compositionRevisionRef", map[string]any{"name": "production-abc"})), ""},
		"a tenant's cloud whose data may go":                      {tenant, claim("env-prod", "c5c3.io", set("spec.dataPolicy", "Delete")), dataPolicy},
		"a tenant's cloud that keeps its data, said":              {tenant, claim("env-prod", "crossplane.c5c3.io", set("spec.dataPolicy", "Retain")), ""},
		"the platform's cloud whose data may go":                  {platform, claim("env-prod", "c5c3.io", set("spec.dataPolicy", "Delete")), ""},
	} {
		err := tc.c.Create(ctx, tc.obj)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: refused: %v", name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: got %v, want refused with %q", name, err, tc.want)
		}
	}

	// Crossplane records what it chose on the claim; the tenant then
	// changes its claim as it may, but not what Crossplane recorded.
	u := claim("env-prod", "c5c3.io")
	if err := tenant.Create(ctx, u); err != nil {
		t.Fatal(err)
	}
	update := func(c client.Client, edit func(*unstructured.Unstructured)) error {
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(u.GroupVersionKind())
		if err := kube.Get(ctx, client.ObjectKeyFromObject(u), got); err != nil {
			return err
		}
		edit(got)
		return c.Update(ctx, got)
	}
	if err := update(crossplane, set("spec.resourceRef", map[string]any{"apiVersion": "c5c3.io/v1alpha1", "kind": "XOpenStackCluster", "name": u.GetName() + "-x7k2p"})); err != nil {
		t.Fatalf("Crossplane recording the claim's composite: %v", err)
	}
	if err := update(tenant, set("spec.size", "small")); err != nil {
		t.Errorf("the tenant changing its claim's size, Crossplane's record unchanged: %v", err)
	}
	// The platform team lets the data go; the tenant cannot take it back
	// nor change it, but edits the rest of its claim.
	if err := update(platform, set("spec.dataPolicy", "Delete")); err != nil {
		t.Errorf("the platform team letting a cloud's data go: %v", err)
	}
	if err := update(tenant, set("spec.size", "medium")); err != nil {
		t.Errorf("the tenant changing its claim's size, its dataPolicy unchanged: %v", err)
	}
	if err := update(tenant, set("spec.dataPolicy", "Retain")); err == nil || !strings.Contains(err.Error(), dataPolicy) {
		t.Errorf("the tenant changing the platform's dataPolicy: got %v, want refused with %q", err, dataPolicy)
	}
	if err := update(platform, set("spec.dataPolicy", "Retain")); err != nil {
		t.Errorf("the platform team keeping a cloud's data again: %v", err)
	}
	for what, edit := range map[string]func(*unstructured.Unstructured){
		"rebinding it":        set("spec.resourceRef.name", "someone-elses"),
		"dropping its record": del("spec.resourceRef"),
		"selecting staging":   selects("staging"),
		"letting its data go": set("spec.dataPolicy", "Delete"),
	} {
		if err := update(tenant, edit); err == nil {
			t.Errorf("the tenant %s: admitted", what)
		}
	}
}
