package providerconfig

import (
	"context"
	"slices"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	openstackv1alpha1 "github.com/c5c3/consumer-plane/apis/openstack/v1alpha1"
)

func TestUsersChangedCountsABurstOnce(t *testing.T) {
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	usage := func(name, pc string) *openstackv1alpha1.ProviderConfigUsage {
		u := &openstackv1alpha1.ProviderConfigUsage{ObjectMeta: metav1.ObjectMeta{Name: name}}
		u.SetProviderConfigReference(xpv2.Reference{Name: pc})
		return u
	}
	const interval = 300 * time.Millisecond
	h := UsersChanged(interval)
	ctx := context.Background()
	start := time.Now()
	for _, u := range []*openstackv1alpha1.ProviderConfigUsage{usage("u1", "cloud-a"), usage("u2", "cloud-a"), usage("u3", "cloud-b")} {
		h.Create(ctx, event.CreateEvent{Object: u}, q)
	}
	h.Delete(ctx, event.DeleteEvent{Object: usage("u4", "cloud-a")}, q)
	if n := q.Len(); n != 0 {
		t.Fatalf("%d reconciles queued at once, want none before the interval", n)
	}
	got := map[string]int{}
	for range 2 {
		req, _ := q.Get()
		got[req.Name]++
		q.Done(req)
	}
	if waited := time.Since(start); waited < interval {
		t.Errorf("a ProviderConfig was reconciled %s after its users changed, want at least %s", waited, interval)
	}
	if got["cloud-a"] != 1 || got["cloud-b"] != 1 {
		t.Errorf("reconciles: %v, want one for each ProviderConfig", got)
	}
	time.Sleep(interval)
	if n := q.Len(); n != 0 {
		t.Errorf("%d more reconciles queued after the burst, want none", n)
	}
}

func TestNotOnlyStatus(t *testing.T) {
	pc := func(mutate func(*openstackv1alpha1.ProviderConfig)) *openstackv1alpha1.ProviderConfig {
		p := &openstackv1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "cloud-a", Generation: 1, ResourceVersion: "1",
			Finalizers: []string{"in-use.crossplane.io"}}}
		mutate(p)
		return p
	}
	now := metav1.Now()
	cases := map[string]struct {
		mutate func(*openstackv1alpha1.ProviderConfig)
		want   bool
	}{
		"status only": {func(p *openstackv1alpha1.ProviderConfig) { p.ResourceVersion = "2"; p.Status.Users = 7 }, false},
		"spec":        {func(p *openstackv1alpha1.ProviderConfig) { p.Generation = 2; p.Spec.Region = "RegionTwo" }, true},
		"deleted":     {func(p *openstackv1alpha1.ProviderConfig) { p.DeletionTimestamp = &now }, true},
		"finalizers":  {func(p *openstackv1alpha1.ProviderConfig) { p.Finalizers = nil }, true},
		"annotations": {func(p *openstackv1alpha1.ProviderConfig) { p.Annotations = map[string]string{"a": "b"} }, true},
		"labels":      {func(p *openstackv1alpha1.ProviderConfig) { p.Labels = map[string]string{"a": "b"} }, true},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			old := pc(func(*openstackv1alpha1.ProviderConfig) {})
			if got := NotOnlyStatus().Update(event.UpdateEvent{ObjectOld: old, ObjectNew: pc(c.mutate)}); got != c.want {
				t.Errorf("passed: %v, want %v", got, c.want)
			}
		})
	}
}

// usersByIndex answers a list of one ProviderConfig's usages by label from
// the index, and passes any other list on as it is.
func TestUsersByIndexListsThroughTheIndex(t *testing.T) {
	s := runtime.NewScheme()
	if err := openstackv1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	objs := append(usages("cloud-a", 3), usages("cloud-b", 2)...)
	byLabel := func(c client.Client, pc string) ([]string, error) {
		l := &openstackv1alpha1.ProviderConfigUsageList{}
		err := c.List(t.Context(), l, client.MatchingLabels{xpv2.LabelKeyProviderName: pc})
		var names []string
		for _, u := range l.Items {
			names = append(names, u.Name)
		}
		return names, err
	}
	indexed := fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).
		WithIndex(&openstackv1alpha1.ProviderConfigUsage{}, usersIndex, configOf).Build()
	got, err := byLabel(usersByIndex{indexed}, "cloud-a")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"cloud-a-user-0", "cloud-a-user-1", "cloud-a-user-2"}; !slices.Equal(got, want) {
		t.Fatalf("users of cloud-a: %v, want %v", got, want)
	}

	// Without the index the same list fails: it was asked of the index.
	plain := fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).Build()
	if _, err := byLabel(usersByIndex{plain}, "cloud-b"); err == nil {
		t.Fatal("a list by the ProviderConfig's label did not go through the index")
	}
	// Any other list is passed on unchanged.
	all := &openstackv1alpha1.ProviderConfigUsageList{}
	if err := (usersByIndex{plain}).List(t.Context(), all, client.MatchingLabels{"other": "label"}); err != nil || len(all.Items) != 0 {
		t.Fatalf("a list by another label: %d items, %v; want none, no error", len(all.Items), err)
	}
	if err := (usersByIndex{plain}).List(t.Context(), all); err != nil || len(all.Items) != len(objs) {
		t.Fatalf("a list of every usage: %d items, %v; want %d", len(all.Items), err, len(objs))
	}
}

// TestUsersCountPatched drives the status writes of crossplane-runtime's
// usage reconciler through the client it gets: a count the cache holds is
// not written, a new one is patched into that one field whatever version
// was read (no conflict, the catalog's status kept), and a ProviderConfig
// being deleted gets the reconciler's whole status as it wrote it.
func TestUsersCountPatched(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := openstackv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	held := &openstackv1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "cloud", Finalizers: []string{"in-use.crossplane.io"}}}
	held.Status.Users = 10
	held.Status.Catalog = &openstackv1alpha1.Catalog{Region: "RegionOne", Services: []string{"compute"}}

	cases := map[string]struct {
		change           func(pc *openstackv1alpha1.ProviderConfig)
		patches, updates int
		users            int64
	}{
		"the count as held":             {func(*openstackv1alpha1.ProviderConfig) {}, 0, 0, 10},
		"the count as held, read older": {func(pc *openstackv1alpha1.ProviderConfig) { pc.ResourceVersion = "1" }, 0, 0, 10},
		"a new count":                   {func(pc *openstackv1alpha1.ProviderConfig) { pc.Status.Users = 11 }, 1, 0, 11},
		"a new count, read older":       {func(pc *openstackv1alpha1.ProviderConfig) { pc.ResourceVersion, pc.Status.Users = "1", 12 }, 1, 0, 12},
		"no users left":                 {func(pc *openstackv1alpha1.ProviderConfig) { pc.Status.Users = 0 }, 1, 0, 0},
		"being deleted, its users blocking it": {func(pc *openstackv1alpha1.ProviderConfig) {
			now := metav1.Now()
			pc.DeletionTimestamp, pc.Status.Users = &now, 3
		}, 0, 1, 3},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			patches, updates := 0, 0
			kube := fake.NewClientBuilder().WithScheme(scheme).WithObjects(held.DeepCopy()).WithStatusSubresource(held).
				WithInterceptorFuncs(interceptor.Funcs{
					SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
						patches++
						return c.SubResource(sub).Patch(ctx, obj, p, opts...)
					},
					SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
						updates++
						return nil // a fake's status update of an object being deleted: only counted
					},
				}).Build()
			c := indexedUsers{}.client(kube, kube)
			pc := &openstackv1alpha1.ProviderConfig{}
			if err := c.Get(context.Background(), client.ObjectKey{Name: "cloud"}, pc); err != nil {
				t.Fatal(err)
			}
			tc.change(pc)
			if err := c.Status().Update(context.Background(), pc); err != nil {
				t.Fatal(err)
			}
			if patches != tc.patches || updates != tc.updates {
				t.Errorf("%d patches and %d updates of the status sent, want %d and %d", patches, updates, tc.patches, tc.updates)
			}
			got := &openstackv1alpha1.ProviderConfig{}
			if err := kube.Get(context.Background(), client.ObjectKey{Name: "cloud"}, got); err != nil {
				t.Fatal(err)
			}
			if tc.updates == 0 && got.Status.Users != tc.users {
				t.Errorf("the API server holds %d users, want %d", got.Status.Users, tc.users)
			}
			if got.Status.Catalog == nil || got.Status.Catalog.Region != "RegionOne" {
				t.Errorf("the catalog reader's status is gone: %+v", got.Status)
			}
		})
	}
}
