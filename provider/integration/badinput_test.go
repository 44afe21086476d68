package integration

import (
	"context"
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cinderv1alpha1 "github.com/c5c3/consumer-plane/apis/cinder/v1alpha1"
	keystonev1alpha1 "github.com/c5c3/consumer-plane/apis/keystone/v1alpha1"
	novav1alpha1 "github.com/c5c3/consumer-plane/apis/nova/v1alpha1"
)

// TestIntegrationBadInput: wrong credentials, an unknown region and a
// backend no cinder-volume serves each give a condition that says so, and
// nothing is created in the cloud.
func TestIntegrationBadInput(t *testing.T) {
	h := withOpenStack(t)
	ctx := context.Background()
	c := h.clients(t)

	cases := []struct {
		name    string
		mg      resource.LegacyManaged
		want    []string
		created func() (bool, error)
	}{
		{
			name: "wrong credentials",
			mg: &keystonev1alpha1.Project{ObjectMeta: metav1.ObjectMeta{Name: h.name("bad-creds")}, Spec: keystonev1alpha1.ProjectSpec{
				ClusterManagedResourceSpec: managedBy(pcWrongCreds), ForProvider: keystonev1alpha1.ProjectParameters{Name: h.name("bad-creds")}}},
			want: []string{"terminal", "refused the credentials", `"admin"`, "401"},
			created: func() (bool, error) {
				p, err := c.keystone.FindProject(ctx, "default", h.name("bad-creds"))
				return p != nil, err
			},
		},
		{
			name: "unknown region",
			mg: &novav1alpha1.Aggregate{ObjectMeta: metav1.ObjectMeta{Name: h.name("bad-region")}, Spec: novav1alpha1.AggregateSpec{
				ClusterManagedResourceSpec: managedBy(pcWrongRegion), ForProvider: novav1alpha1.AggregateParameters{Name: h.name("bad-region")}}},
			want: []string{"terminal", `no compute endpoint in region "RegionX"`, "spec.region"},
			created: func() (bool, error) {
				a, err := c.nova.FindAggregate(ctx, h.name("bad-region"))
				return a != nil, err
			},
		},
		{
			name: "backend no cinder-volume serves",
			mg: &cinderv1alpha1.VolumeType{ObjectMeta: metav1.ObjectMeta{Name: h.name("bad-backend")}, Spec: cinderv1alpha1.VolumeTypeSpec{
				ClusterManagedResourceSpec: managedBy(pcLocal),
				ForProvider:                cinderv1alpha1.VolumeTypeParameters{Name: h.name("bad-backend"), BackendName: "ceph-no-such-pool"}}},
			want: []string{"terminal", `spec.forProvider.backendName "ceph-no-such-pool" is served by no cinder-volume service`, "ceph-st-pool-a"},
			created: func() (bool, error) {
				v, err := c.cinder.FindVolumeType(ctx, h.name("bad-backend"))
				return v != nil, err
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h.create(t, tc.mg)
			msg := h.waitSyncError(t, tc.mg, tc.want...)
			t.Logf("condition: %s", msg)
			if created, err := tc.created(); err != nil || created {
				t.Fatalf("something was created in the cloud (created=%v, err=%v)", created, err)
			}
			// A resource that cannot reach its cloud can still be let go:
			// with deletionPolicy Orphan the finalizer comes off without a
			// connection.
			h.update(t, tc.mg, func() { tc.mg.SetDeletionPolicy(xpv2.DeletionOrphan) })
			h.delete(t, tc.mg)
			h.waitGone(t, tc.mg)
		})
	}
}
