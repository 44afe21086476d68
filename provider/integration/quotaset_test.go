package integration

import (
	"context"
	"fmt"
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cinderv1alpha1 "github.com/c5c3/consumer-plane/apis/cinder/v1alpha1"
	keystonev1alpha1 "github.com/c5c3/consumer-plane/apis/keystone/v1alpha1"
	neutronv1alpha1 "github.com/c5c3/consumer-plane/apis/neutron/v1alpha1"
	novav1alpha1 "github.com/c5c3/consumer-plane/apis/nova/v1alpha1"
	"github.com/c5c3/consumer-plane/provider/internal/clients/openstack"
)

func ptr(v int64) *int64 { return &v }

func boolPtr(v bool) *bool { return &v }

// A quotaCase is one service's QuotaSet: the quota the test changes, and
// how to set it in the spec.
type quotaCase struct {
	kind   string
	quotas func(*openstack.Session) (openstack.Quotas, error)
	key    string
	newMR  func(name string, project keystonev1alpha1.ProjectIDReference, v int64) resource.Managed
	set    func(mg resource.Managed, v int64)
}

var quotaCases = []quotaCase{
	{
		kind: "nova/QuotaSet", quotas: openstack.NewComputeQuotas, key: "cores",
		newMR: func(name string, p keystonev1alpha1.ProjectIDReference, v int64) resource.Managed {
			return &novav1alpha1.QuotaSet{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: novav1alpha1.QuotaSetSpec{
				ClusterManagedResourceSpec: managedBy(pcLocal),
				ForProvider:                novav1alpha1.QuotaSetParameters{ProjectIDReference: p, Cores: ptr(v), Instances: ptr(7)},
			}}
		},
		set: func(mg resource.Managed, v int64) { mg.(*novav1alpha1.QuotaSet).Spec.ForProvider.Cores = ptr(v) },
	},
	{
		kind: "cinder/QuotaSet", quotas: openstack.NewVolumeQuotas, key: "gigabytes",
		newMR: func(name string, p keystonev1alpha1.ProjectIDReference, v int64) resource.Managed {
			return &cinderv1alpha1.QuotaSet{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: cinderv1alpha1.QuotaSetSpec{
				ClusterManagedResourceSpec: managedBy(pcLocal),
				ForProvider:                cinderv1alpha1.QuotaSetParameters{ProjectIDReference: p, Gigabytes: ptr(v), Volumes: ptr(7)},
			}}
		},
		set: func(mg resource.Managed, v int64) { mg.(*cinderv1alpha1.QuotaSet).Spec.ForProvider.Gigabytes = ptr(v) },
	},
	{
		kind: "neutron/QuotaSet", quotas: openstack.NewNetworkQuotas, key: "network",
		newMR: func(name string, p keystonev1alpha1.ProjectIDReference, v int64) resource.Managed {
			return &neutronv1alpha1.QuotaSet{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: neutronv1alpha1.QuotaSetSpec{
				ClusterManagedResourceSpec: managedBy(pcLocal),
				ForProvider:                neutronv1alpha1.QuotaSetParameters{ProjectIDReference: p, Networks: ptr(v), Ports: ptr(77)},
			}}
		},
		set: func(mg resource.Managed, v int64) { mg.(*neutronv1alpha1.QuotaSet).Spec.ForProvider.Networks = ptr(v) },
	},
}

// TestIntegrationQuotaSets takes each service's QuotaSet through create
// (on a Project resolved by reference), update, drift, delete (back to the
// defaults), Observe-only import and delete after the project is gone.
func TestIntegrationQuotaSets(t *testing.T) {
	h := withOpenStack(t)
	ctx := context.Background()
	project := &keystonev1alpha1.Project{ObjectMeta: metav1.ObjectMeta{Name: h.name("quota-project")}, Spec: keystonev1alpha1.ProjectSpec{
		ClusterManagedResourceSpec: managedBy(pcLocal), ForProvider: keystonev1alpha1.ProjectParameters{Name: h.name("quota-project")},
	}}
	h.create(t, project)
	h.waitReady(t, project)
	projectID := meta.GetExternalName(project)
	t.Cleanup(func() { h.delete(t, project) })

	for _, q := range quotaCases {
		t.Run(q.kind, func(t *testing.T) {
			t.Parallel()
			quotas, err := q.quotas(h.cloud)
			if err != nil {
				t.Fatal(err)
			}
			value := func(project string) int64 {
				have, err := quotas.Get(ctx, project)
				if err != nil {
					t.Fatalf("get quotas: %v", err)
				}
				return have[q.key]
			}
			waitValue := func(want int64) {
				eventually(t, fmt.Sprintf("%s %s = %d", q.kind, q.key, want), func() (bool, string) {
					got := value(projectID)
					return got == want, fmt.Sprintf("%s = %d", q.key, got)
				})
			}
			defaultValue := value(projectID)

			mg := q.newMR(h.name("q-"+q.key), keystonev1alpha1.ProjectIDReference{ProjectIDRef: ref(project.Name)}, 41)
			h.create(t, mg)
			h.waitReady(t, mg)
			if meta.GetExternalName(mg) != projectID {
				t.Fatalf("external name %q, want the project ID %q", meta.GetExternalName(mg), projectID)
			}
			waitValue(41)
			h.update(t, mg, func() { q.set(mg, 42) })
			waitValue(42)
			if err := quotas.Update(ctx, projectID, map[string]int64{q.key: 3}); err != nil {
				t.Fatalf("drift: %v", err)
			}
			waitValue(42)

			// Observe-only: watches the quotas, leaves them when deleted.
			watcher := q.newMR(h.name("q-watch-"+q.key), keystonev1alpha1.ProjectIDReference{ProjectID: projectID}, 1)
			watcher.SetManagementPolicies(xpv2.ManagementPolicies{xpv2.ManagementActionObserve})
			h.create(t, watcher)
			h.waitReady(t, watcher)
			h.delete(t, watcher)
			h.waitGone(t, watcher)
			waitValue(42)

			h.delete(t, mg)
			h.waitGone(t, mg)
			waitValue(defaultValue)
		})
	}
}
