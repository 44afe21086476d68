package providerconfig

import (
	"slices"
	"testing"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	openstackv1alpha1 "github.com/c5c3/consumer-plane/apis/openstack/v1alpha1"
)

// Against a real API server, the catalog reader writes its catalog and
// condition from a copy older than the ProviderConfig (its users counted
// since) without a conflict, keeps the users' count, keeps the catalog
// when a later read fails, even from a copy that has none, and replaces a
// changed catalog whole.
func TestCatalogWrittenByPatchIntegration(t *testing.T) {
	kube := uncachedClient(t)
	ctx := t.Context()
	r := &CatalogReader{OpenStack: OpenStack{Kube: kube}}
	read := func(services ...string) *openstackv1alpha1.ProviderConfig {
		pc := &openstackv1alpha1.ProviderConfig{}
		pc.Status.Catalog = &openstackv1alpha1.Catalog{Region: "RegionOne", Services: services}
		pc.SetConditions(xpv2.Condition{Type: openstackv1alpha1.ConditionCatalogRead, Status: corev1.ConditionTrue, Reason: reasonCatalogRead, LastTransitionTime: metav1.Now()})
		return pc
	}
	failed := func() *openstackv1alpha1.ProviderConfig {
		pc := &openstackv1alpha1.ProviderConfig{}
		pc.SetConditions(xpv2.Condition{Type: openstackv1alpha1.ConditionCatalogRead, Status: corev1.ConditionFalse, Reason: reasonCatalogFailing, Message: "Keystone unreachable", LastTransitionTime: metav1.Now()})
		return pc
	}
	get := func(name string) *openstackv1alpha1.ProviderConfig {
		t.Helper()
		pc := &openstackv1alpha1.ProviderConfig{}
		if err := kube.Get(ctx, client.ObjectKey{Name: name}, pc); err != nil {
			t.Fatal(err)
		}
		return pc
	}
	// as is the reconciler's want from the cache's copy: the catalog read
	// (or, when the read failed, the copy's), and the condition.
	as := func(cached, read *openstackv1alpha1.ProviderConfig) *openstackv1alpha1.ProviderConfig {
		w := cached.DeepCopy()
		if read.Status.Catalog != nil {
			w.Status.Catalog = read.Status.Catalog
		}
		w.SetConditions(read.GetCondition(openstackv1alpha1.ConditionCatalogRead))
		return w
	}
	check := func(t *testing.T, pc *openstackv1alpha1.ProviderConfig, users int64, services []string, catalogRead corev1.ConditionStatus) {
		t.Helper()
		if pc.Status.Users != users {
			t.Errorf("users %d, want %d (another writer's)", pc.Status.Users, users)
		}
		if pc.Status.Catalog == nil || !slices.Equal(pc.Status.Catalog.Services, services) {
			t.Errorf("catalog %+v, want the services %v", pc.Status.Catalog, services)
		}
		if c := pc.GetCondition(openstackv1alpha1.ConditionCatalogRead); c.Status != catalogRead {
			t.Errorf("condition CatalogRead %q, want %q", c.Status, catalogRead)
		}
		if len(pc.Status.Conditions) != 1 {
			t.Errorf("conditions %+v, want CatalogRead alone", pc.Status.Conditions)
		}
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "catalog"}}

	mustCreate(t, kube, openStackConfig("catalog-patched", secret))
	cached := get("catalog-patched")
	// Another writer: the users' count.
	other := cached.DeepCopy()
	other.Status.Users = 3
	if err := kube.Status().Update(ctx, other); err != nil {
		t.Fatal(err)
	}
	want := as(cached, read("compute", "identity"))
	if err := r.write(ctx, cached, want); err != nil {
		t.Fatalf("the catalog written from a copy older than the users' count: %v", err)
	}
	check(t, get("catalog-patched"), 3, []string{"compute", "identity"}, corev1.ConditionTrue)
	// A read that fails writes the condition and nothing else: the catalog
	// stays, even written from a copy that has none.
	if err := r.write(ctx, cached, as(cached, failed())); err != nil {
		t.Fatal(err)
	}
	check(t, get("catalog-patched"), 3, []string{"compute", "identity"}, corev1.ConditionFalse)
	// The next read that succeeds writes a changed catalog whole.
	if err := r.write(ctx, cached, as(cached, read("identity"))); err != nil {
		t.Fatal(err)
	}
	check(t, get("catalog-patched"), 3, []string{"identity"}, corev1.ConditionTrue)
}
