package controller

import (
	"context"
	"testing"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	keystonev1alpha1 "github.com/c5c3/consumer-plane/apis/keystone/v1alpha1"
	openstackv1alpha1 "github.com/c5c3/consumer-plane/apis/openstack/v1alpha1"
)

func TestStatusUpdateSkippedWhenUnchanged(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := keystonev1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	ready := &keystonev1alpha1.Project{ObjectMeta: metav1.ObjectMeta{Name: "p"}}
	ready.SetConditions(xpv2.Available(), xpv2.ReconcileSuccess())
	ready.Status.AtProvider.ID = "0a1b"

	cases := map[string]struct {
		change func(p *keystonev1alpha1.Project)
		want   int
	}{
		"a poll that changed nothing":            {func(*keystonev1alpha1.Project) {}, 0},
		"a condition changed":                    {func(p *keystonev1alpha1.Project) { p.SetConditions(xpv2.Unavailable()) }, 1},
		"what the cloud reports changed":         {func(p *keystonev1alpha1.Project) { p.Status.AtProvider.ID = "9f" }, 1},
		"the object read is older than the held": {func(p *keystonev1alpha1.Project) { p.ResourceVersion = "1" }, 1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			updates := 0
			kube := fake.NewClientBuilder().WithScheme(scheme).WithObjects(ready.DeepCopy()).WithStatusSubresource(ready).
				WithInterceptorFuncs(interceptor.Funcs{SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
					updates++
					return c.SubResource(sub).Update(ctx, obj, opts...)
				}}).Build()
			c := statusSkipping{Client: kube}
			p := &keystonev1alpha1.Project{}
			if err := c.Get(context.Background(), client.ObjectKey{Name: "p"}, p); err != nil {
				t.Fatal(err)
			}
			tc.change(p)
			err := c.Status().Update(context.Background(), p)
			if tc.want == 0 && err != nil {
				t.Fatal(err)
			}
			if updates != tc.want {
				t.Errorf("%d status updates sent, want %d", updates, tc.want)
			}
		})
	}
}

// TestUpdateSkippedWhenUnchanged drives crossplane-runtime's ProviderConfig
// usage reconciler's writes: an update after adding a finalizer it already
// has, and a status update with the count it already holds, are not sent.
func TestUpdateSkippedWhenUnchanged(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := openstackv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	held := &openstackv1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "cloud", Finalizers: []string{"in-use.crossplane.io"}}}
	held.Status.Users = 10

	cases := map[string]struct {
		change        func(pc *openstackv1alpha1.ProviderConfig)
		updates, stat int
	}{
		"the finalizer and the count as held": {func(*openstackv1alpha1.ProviderConfig) {}, 0, 0},
		"a finalizer added":                   {func(pc *openstackv1alpha1.ProviderConfig) { pc.Finalizers = append(pc.Finalizers, "other") }, 1, 0},
		"a label changed":                     {func(pc *openstackv1alpha1.ProviderConfig) { pc.Labels = map[string]string{"a": "b"} }, 1, 0},
		// An update does not write the status (a subresource).
		"the count changed": {func(pc *openstackv1alpha1.ProviderConfig) { pc.Status.Users = 11 }, 0, 1},
		// A newer version was written since (its status): the update would
		// fail on the conflict, to add what is already there.
		"the object read is older": {func(pc *openstackv1alpha1.ProviderConfig) { pc.ResourceVersion = "1" }, 0, 1},
		"the object read is older and lacks the finalizer": {func(pc *openstackv1alpha1.ProviderConfig) {
			pc.ResourceVersion, pc.Finalizers = "1", nil
		}, 1, 1},
		"another object of that name": {func(pc *openstackv1alpha1.ProviderConfig) { pc.UID = "other" }, 1, 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			updates, stat := 0, 0
			kube := fake.NewClientBuilder().WithScheme(scheme).WithObjects(held.DeepCopy()).WithStatusSubresource(held).
				WithInterceptorFuncs(interceptor.Funcs{
					Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
						updates++
						return c.Update(ctx, obj, opts...)
					},
					SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
						stat++
						return c.SubResource(sub).Update(ctx, obj, opts...)
					},
				}).Build()
			c := UnchangedWritesSkipped(kube)
			pc := &openstackv1alpha1.ProviderConfig{}
			if err := c.Get(context.Background(), client.ObjectKey{Name: "cloud"}, pc); err != nil {
				t.Fatal(err)
			}
			// As the usage reconciler does: the object, then its status.
			tc.change(pc)
			users := pc.Status.Users
			err := c.Update(context.Background(), pc)
			if tc.updates == 0 && err != nil {
				t.Fatal(err)
			}
			pc.Status.Users = users
			err = c.Status().Update(context.Background(), pc)
			if tc.stat == 0 && err != nil {
				t.Fatal(err)
			}
			if updates != tc.updates || stat != tc.stat {
				t.Errorf("%d updates and %d status updates sent, want %d and %d", updates, stat, tc.updates, tc.stat)
			}
		})
	}
}
