//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	consumerv1alpha1 "github.com/c5c3/consumer-plane/apis/consumer/v1alpha1"
	openstackv1alpha1 "github.com/c5c3/consumer-plane/apis/openstack/v1alpha1"
	"github.com/c5c3/consumer-plane/test/kubetest"
)

var (
	xOpenStackClusters       = cloudsGroup("xopenstackclusters")
	openStackProviderConfigs = schema.GroupVersionResource{Group: openstackv1alpha1.Group, Version: openstackv1alpha1.Version, Resource: "providerconfigs"}
	keystoneProjects         = schema.GroupVersionResource{Group: "keystone.provider.c5c3.io", Version: "v1alpha1", Resource: "projects"}
)

// cloudWithoutCompute (4b): a cloud in us-east-1, whose catalog has no
// Nova, Cinder or Neutron (the operator stand-in registers them in
// eu-de-1 only, as an operator that deploys compute would), applied by
// e2e.sh before this suite runs, composes only what its catalog serves, and
// is not Ready: Ready means every service it enables answers. The claim
// says which are missing and why, read as the tenant. Then its pool
// hv-pool-us's cluster stops answering for a while; deleted, it is gone
// before section 5 deletes the pool it consumes. It is claimed in the
// deprecated crossplane.c5c3.io, as clouds were before they moved to
// c5c3.io: it works as any other, every request to it warns, and a plain
// kubectl get openstackclusters does not list it.
func cloudWithoutCompute(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	teamC := tenantCloud{namespace: "team-c", name: "team-c-us", legacy: true}
	claim := teamC.claim()
	if !eventually(t, 600*time.Second, "team-c-us (us-east-1, no compute in its catalog) has every stage done but its services: CloudReady, and ServicesServed says what its catalog lacks", claim,
		func(c *conditioned) (bool, string) {
			cloud, served := c.condition("CloudReady"), c.condition("ServicesServed")
			return cloud.Status == corev1.ConditionTrue && served.Reason == "NotInCatalog",
				fmt.Sprintf("CloudReady %s %q; ServicesServed %s %q", cloud.Status, cloud.Message, served.Reason, served.Message)
		}) {
		return
	}
	t.Run("... and it is not Ready: a tenant waiting for Ready does not get a cloud without compute", func(t *testing.T) {
		c, err := get[conditioned](t.Context(), claim)
		if err != nil {
			t.Fatal(err)
		}
		if r := c.condition("Ready"); r.Status == corev1.ConditionTrue {
			t.Errorf("team-c-us is Ready without the nova, cinder and neutron it enables: %q", r.Message)
		}
	})
	c, err := get[cloudClaim](ctx, claim)
	if err != nil || c.Spec.ResourceRef == nil {
		t.Fatalf("team-c-us names no composite (%v)", err)
	}
	xr := c.Spec.ResourceRef.Name
	t.Run("its ProviderConfig reads a catalog of us-east-1 with identity and no compute, volume or network", func(t *testing.T) {
		pc, err := get[openstackv1alpha1.ProviderConfig](t.Context(), ref{gvr: openStackProviderConfigs, name: xr})
		if err != nil || pc.Status.Catalog == nil {
			t.Fatalf("its ProviderConfig's catalog: %v", err)
		}
		cat := pc.Status.Catalog
		served := slices.ContainsFunc(cat.Services, func(s string) bool {
			return s == "compute" || s == "block-storage" || strings.HasPrefix(s, "volume") || s == "network"
		})
		if cat.Region != "us-east-1" || !slices.Contains(cat.Services, "identity") || served {
			t.Errorf("its ProviderConfig's catalog: %s: %v", cat.Region, cat.Services)
		}
	})
	composedFor := func(ctx context.Context, gvrs ...schema.GroupVersionResource) ([]string, error) {
		var left []string
		for _, r := range gvrs {
			l, err := plane.dyn.Resource(r).List(ctx, metav1.ListOptions{LabelSelector: "crossplane.io/claim-name=team-c-us"})
			if err != nil {
				return nil, err
			}
			for _, i := range l.Items {
				left = append(left, r.Resource+"/"+i.GetName())
			}
		}
		return left, nil
	}
	t.Run("no aggregates, volume types or quotas were composed for it", func(t *testing.T) {
		left, err := composedFor(t.Context(), computeVolumeAndQuota...)
		if err != nil || len(left) > 0 {
			t.Errorf("composed for a cloud without compute: %v %v", left, err)
		}
	})
	t.Run("its Keystone project exists", func(t *testing.T) {
		if _, err := plane.dyn.Resource(keystoneProjects).Get(t.Context(), xr, metav1.GetOptions{}); err != nil {
			t.Errorf("no Keystone project for team-c-us: %v", err)
		}
	})
	t.Run("the tenant reads on the claim what its cloud does not serve", func(t *testing.T) {
		c := tenantReads(t, teamC)
		served := c.Status.GetCondition("ServicesServed")
		if !slices.Equal(c.Status.UnservedServices, []string{"nova", "cinder", "neutron"}) || served.Reason != "NotInCatalog" || !strings.Contains(served.Message, "no endpoint for nova (compute: the c5c3 ControlPlane cannot deploy it") {
			t.Errorf("ServicesServed on team-c-us: %v %s: %q", c.Status.UnservedServices, served.Reason, served.Message)
		}
		t.Logf("%s: %s", served.Reason, served.Message)
	})

	// #54: meanwhile the cluster of hv-pool-us, whose nodes it holds, stops
	// answering, and answers again (no other section uses hv-pool-us).
	t.Run("hv-pool-us's cluster API unreachable: the pool says so, team-c-us stays as it was; both recover", func(t *testing.T) {
		poolClusterUnreachable(t, "hv-pool-us", teamC)
	})
	t.Run("claimed in the deprecated crossplane.c5c3.io, every request to it warns where clouds are claimed now", func(t *testing.T) {
		w := &kubetest.Warnings{}
		cfg := tenantConfig("team-c")
		cfg.WarningHandler = w
		if _, err := dynamic.NewForConfigOrDie(cfg).Resource(claim.gvr).Namespace(claim.namespace).Get(t.Context(), claim.name, metav1.GetOptions{}); err != nil {
			t.Fatal(err)
		}
		if seen := w.Take(); !slices.Equal(seen, []string{consumerv1alpha1.LegacyCloudWarning}) {
			t.Errorf("the API server warns the tenant reading team-c-us with %q, want %q", seen, consumerv1alpha1.LegacyCloudWarning)
		}
	})
	t.Run("kubectl get openstackclusters does not list it, openstackclusters.crossplane.c5c3.io does", func(t *testing.T) {
		plain, err := kubectl(t.Context(), "-n", "team-c", "get", "openstackclusters", "-o", "name")
		if err != nil {
			t.Fatal(err)
		}
		full, err := kubectl(t.Context(), "-n", "team-c", "get", "openstackclusters.crossplane.c5c3.io", "-o", "name")
		if err != nil {
			t.Fatal(err)
		}
		listed := func(l string) bool { return strings.HasSuffix(l, "/team-c-us") }
		if slices.ContainsFunc(plain, listed) || !slices.Contains(full, "openstackcluster.crossplane.c5c3.io/team-c-us") {
			t.Errorf("kubectl -n team-c get openstackclusters: %q; openstackclusters.crossplane.c5c3.io: %q", plain, full)
		}
	})

	if err := plane.dyn.Resource(claim.gvr).Namespace(claim.namespace).Delete(ctx, claim.name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatalf("cannot delete team-c-us: %v", err)
	}
	eventuallyGone(t, 180*time.Second, "team-c-us is deleted (before 5 deletes the pool it consumes)", ref{gvr: legacyGroup(xOpenStackClusters), name: xr})
	eventuallyNone(t, 60*time.Second, "... and its usages of hv-pool-us, st-pool-us and cp-us-east-1 are released", func(ctx context.Context) ([]string, error) {
		return composedFor(ctx, usages)
	})
	// Its tenant user goes before its application credential, whose
	// password Secret goes with the user: the credential's deletion must
	// finish anyway.
	managed := managedResources(t)
	eventuallyNone(t, 120*time.Second, "... and every managed resource of it is gone, its tenant's application credential too", func(ctx context.Context) ([]string, error) {
		return composedFor(ctx, managed...)
	})
}

// computeVolumeAndQuota are the provider's kinds a cloud composes only for
// the services its catalog serves.
var computeVolumeAndQuota = []schema.GroupVersionResource{
	{Group: "nova.provider.c5c3.io", Version: "v1alpha1", Resource: "aggregates"},
	{Group: "cinder.provider.c5c3.io", Version: "v1alpha1", Resource: "volumetypes"},
	{Group: "nova.provider.c5c3.io", Version: "v1alpha1", Resource: "quotasets"},
	{Group: "cinder.provider.c5c3.io", Version: "v1alpha1", Resource: "quotasets"},
	{Group: "neutron.provider.c5c3.io", Version: "v1alpha1", Resource: "quotasets"},
}

// managedResources are the resources of category managed (kubectl get
// managed): every provider's managed resource kinds.
func managedResources(t *testing.T) []schema.GroupVersionResource {
	t.Helper()
	lists, err := plane.kube.Discovery().ServerPreferredResources()
	if err != nil && len(lists) == 0 {
		t.Fatalf("cannot discover the API: %v", err)
	}
	var managed []schema.GroupVersionResource
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if slices.Contains(r.Categories, "managed") && !strings.Contains(r.Name, "/") {
				managed = append(managed, gv.WithResource(r.Name))
			}
		}
	}
	if len(managed) == 0 {
		t.Fatalf("no resources of category managed")
	}
	return managed
}
