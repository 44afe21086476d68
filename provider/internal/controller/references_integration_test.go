package controller

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	cinderv1alpha1 "github.com/c5c3/consumer-plane/apis/cinder/v1alpha1"
	keystonev1alpha1 "github.com/c5c3/consumer-plane/apis/keystone/v1alpha1"
	"github.com/c5c3/consumer-plane/test/kubetest"
)

// The test API server (kube-apiserver and etcd from the tool cache) with
// the provider's CRDs.
func TestMain(m *testing.M) {
	os.Exit(kubetest.Main(m, "../../package/crds"))
}

// requests records the reconcile requests a controller got.
type requests struct {
	mu  sync.Mutex
	got map[string]int
}

func (r *requests) Reconcile(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got[req.Name]++
	return reconcile.Result{}, nil
}

func (r *requests) count(name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.got[name]
}

// wakeController runs a controller of kind obj that sees nothing of its own
// kind and is reconciled only through the wake sources of wakes: every
// request it records came from them.
// The cached reader is the manager's: the wakes find the referrers there.
func wakeController(t *testing.T, obj Referencing, list client.ObjectList, wakes []Wake) (kube client.Client, cached client.Reader, rec *requests) {
	t.Helper()
	mgr := kubetest.Manager(t, keystonev1alpha1.AddToScheme, cinderv1alpha1.AddToScheme)
	srcs, err := wakeSources(mgr, obj, list, wakes)
	if err != nil {
		t.Fatal(err)
	}
	rec = &requests{got: map[string]int{}}
	none := predicate.NewPredicateFuncs(func(client.Object) bool { return false })
	// A probe through a channel: the controller starts every watch before
	// its workers, so once the probe is reconciled the wakes listen (a
	// change made before would reach them as a creation, which wakes
	// nobody).
	probe := make(chan event.GenericEvent, 1)
	b := ctrl.NewControllerManagedBy(mgr).Named("wake-test").For(obj, builder.WithPredicates(none)).
		WatchesRawSource(source.Channel((<-chan event.GenericEvent)(probe), &handler.EnqueueRequestForObject{}))
	for _, src := range srcs {
		b = b.WatchesRawSource(src)
	}
	if err := b.Complete(rec); err != nil {
		t.Fatal(err)
	}
	kube = kubetest.Start(t, mgr)
	p, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		t.Fatalf("%T is not an object", obj)
	}
	p.SetName("probe")
	probe <- event.GenericEvent{Object: p}
	eventually(t, "the controller runs", func() bool { return rec.count("probe") > 0 })
	return kube, mgr.GetClient(), rec
}

// eventually waits up to 20 s for cond; the wakes come from a watch, within
// a second on an idle machine.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("not within 20 s: %s", what)
}

// create creates objs, deleted when the test ends, and waits until the
// manager's cache holds them: a wake finds only referrers the cache has.
func create(t *testing.T, kube client.Client, cached client.Reader, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := kube.Create(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = kube.Delete(context.Background(), o) }) //nolint:errcheck // best effort: the API server goes with the test binary
	}
	for _, o := range objs {
		got, ok := o.DeepCopyObject().(client.Object)
		if !ok {
			t.Fatalf("%T is not an object", o)
		}
		eventually(t, "the cache holds "+o.GetName(), func() bool {
			return cached.Get(context.Background(), client.ObjectKeyFromObject(o), got) == nil
		})
	}
}

// update changes o (read afresh) with change.
func update[T client.Object](t *testing.T, kube client.Client, o T, change func(T)) {
	t.Helper()
	if err := kube.Get(context.Background(), client.ObjectKeyFromObject(o), o); err != nil {
		t.Fatal(err)
	}
	change(o)
	if err := kube.Update(context.Background(), o); err != nil {
		t.Fatal(err)
	}
}

func projectRef(name string) keystonev1alpha1.ProjectIDReference {
	return keystonev1alpha1.ProjectIDReference{ProjectIDRef: &xpv2.Reference{Name: name}}
}

// TestWakeReferrersIntegration: a resource waiting on the Project it
// references is reconciled as soon as that Project gets its ID, and not
// when the Project changes otherwise; one referencing another Project is
// left alone.
func TestWakeReferrersIntegration(t *testing.T) {
	kube, cached, rec := wakeController(t, &cinderv1alpha1.QuotaSet{}, &cinderv1alpha1.QuotaSetList{}, []Wake{{Object: &keystonev1alpha1.Project{}}})
	managed := xpv2.ClusterManagedResourceSpec{ProviderConfigReference: &xpv2.Reference{Name: "cloud"}}
	project := &keystonev1alpha1.Project{ObjectMeta: metav1.ObjectMeta{Name: "wake-p"},
		Spec: keystonev1alpha1.ProjectSpec{ClusterManagedResourceSpec: managed, ForProvider: keystonev1alpha1.ProjectParameters{Name: "wake-p"}}}
	other := &keystonev1alpha1.Project{ObjectMeta: metav1.ObjectMeta{Name: "wake-other"},
		Spec: keystonev1alpha1.ProjectSpec{ClusterManagedResourceSpec: managed, ForProvider: keystonev1alpha1.ProjectParameters{Name: "wake-other"}}}
	quota := &cinderv1alpha1.QuotaSet{ObjectMeta: metav1.ObjectMeta{Name: "wake-q"},
		Spec: cinderv1alpha1.QuotaSetSpec{ClusterManagedResourceSpec: managed, ForProvider: cinderv1alpha1.QuotaSetParameters{ProjectIDReference: projectRef("wake-p")}}}
	bystander := &cinderv1alpha1.QuotaSet{ObjectMeta: metav1.ObjectMeta{Name: "wake-bystander"},
		Spec: cinderv1alpha1.QuotaSetSpec{ClusterManagedResourceSpec: managed, ForProvider: cinderv1alpha1.QuotaSetParameters{ProjectIDReference: projectRef("wake-other")}}}
	create(t, kube, cached, quota, bystander)
	// Creations wake nobody, even of a Project that comes with its ID (an
	// import): at the provider's start every resource is listed as created,
	// and every referrer is reconciled anyway.
	meta.SetExternalName(other, "9f8e")
	create(t, kube, cached, project, other)
	time.Sleep(2 * time.Second)
	if n, m := rec.count("wake-q"), rec.count("wake-bystander"); n+m != 0 {
		t.Fatalf("creating the Projects reconciled their QuotaSets (%d and %d times)", n, m)
	}

	update(t, kube, project, func(p *keystonev1alpha1.Project) { meta.SetExternalName(p, "0a1b2c") })
	eventually(t, "the QuotaSet is reconciled once its Project has its ID", func() bool { return rec.count("wake-q") > 0 })

	woken := rec.count("wake-q")
	update(t, kube, project, func(p *keystonev1alpha1.Project) { p.SetLabels(map[string]string{"team": "a"}) })
	// A change that unblocks nobody: no request in the next 2 s (a wake
	// above came within a second).
	time.Sleep(2 * time.Second)
	if n := rec.count("wake-q"); n != woken {
		t.Errorf("a label change of the Project reconciled its QuotaSet (%d times, %d before)", n, woken)
	}
	if n := rec.count("wake-bystander"); n != 0 {
		t.Errorf("the QuotaSet of another Project was reconciled %d times", n)
	}

	// Ready changing (the Project was found gone, or is back) wakes too.
	if err := kube.Get(context.Background(), client.ObjectKeyFromObject(project), project); err != nil {
		t.Fatal(err)
	}
	project.SetConditions(xpv2.Available())
	if err := kube.Status().Update(context.Background(), project); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the QuotaSet is reconciled when its Project turns Ready", func() bool { return rec.count("wake-q") > woken })
}

// TestWakeCredentialOnGrantIntegration: an application credential waits
// for its user's grant (Keystone refuses a credential with a role its user
// lacks): the grant's creation wakes it, through the user both name.
func TestWakeCredentialOnGrantIntegration(t *testing.T) {
	kube, cached, rec := wakeController(t, &keystonev1alpha1.ApplicationCredential{}, &keystonev1alpha1.ApplicationCredentialList{},
		[]Wake{{Object: &keystonev1alpha1.RoleAssignment{}, Unblocks: keystonev1alpha1.GrantedUser}})
	managed := xpv2.ClusterManagedResourceSpec{ProviderConfigReference: &xpv2.Reference{Name: "cloud"}}
	user := keystonev1alpha1.UserIDReference{UserIDRef: &xpv2.Reference{Name: "wake-u"}}
	grant := &keystonev1alpha1.RoleAssignment{ObjectMeta: metav1.ObjectMeta{Name: "wake-u-member"},
		Spec: keystonev1alpha1.RoleAssignmentSpec{ClusterManagedResourceSpec: managed, ForProvider: keystonev1alpha1.RoleAssignmentParameters{
			Role: "member", UserIDReference: user, ProjectIDReference: projectRef("wake-p2")}}}
	cred := &keystonev1alpha1.ApplicationCredential{ObjectMeta: metav1.ObjectMeta{Name: "wake-u"},
		Spec: keystonev1alpha1.ApplicationCredentialSpec{ClusterManagedResourceSpec: managed, ForProvider: keystonev1alpha1.ApplicationCredentialParameters{
			Name: "wake-u", UserIDReference: user, ProjectIDReference: projectRef("wake-p2"), Roles: []string{"member"},
			PasswordSecretRef: xpv2.SecretKeySelector{SecretReference: xpv2.SecretReference{Namespace: "mgmt", Name: "wake-u"}, Key: "password"},
			Cloud:             keystonev1alpha1.CloudsYAML{Name: "wake", Region: "eu-de-1"},
		}}}
	create(t, kube, cached, cred)
	create(t, kube, cached, grant)
	update(t, kube, grant, func(g *keystonev1alpha1.RoleAssignment) { meta.SetExternalName(g, "member:user:p2") })
	eventually(t, "the credential is reconciled once its user's grant exists", func() bool { return rec.count("wake-u") > 0 })
}
