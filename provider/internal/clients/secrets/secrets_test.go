package secrets

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	keystonev1alpha1 "github.com/c5c3/consumer-plane/apis/keystone/v1alpha1"
)

// Without a watch of versions, the TTL alone decides.
func TestCachedByTTL(t *testing.T) {
	gets := 0
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "cloud-admin", Namespace: "crossplane-system"}, Data: map[string][]byte{"clouds.yaml": []byte("v1")}}
	kube := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(secret).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*corev1.Secret); ok {
				gets++
			}
			return c.Get(ctx, key, obj, opts...)
		},
	}).Build()
	const ttl = 200 * time.Millisecond
	c := Cached(kube, nil, ttl)
	read := func() string {
		s := &corev1.Secret{}
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(secret), s); err != nil {
			t.Fatal(err)
		}
		s.Data["clouds.yaml"] = []byte("changed by the caller")
		return string(s.Data["clouds.yaml"])
	}
	for range 5 {
		read()
	}
	if gets != 1 {
		t.Fatalf("5 reads within the TTL asked the API server %d times, want 1", gets)
	}
	// What a caller does with its copy does not reach the next one.
	s := &corev1.Secret{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(secret), s); err != nil || string(s.Data["clouds.yaml"]) != "v1" {
		t.Fatalf("the cached Secret changed with a caller's copy: %q, %v", s.Data["clouds.yaml"], err)
	}
	// A rotated credential is read once the TTL passed.
	secret.Data["clouds.yaml"] = []byte("v2")
	if err := kube.Update(context.Background(), secret); err != nil {
		t.Fatal(err)
	}
	time.Sleep(ttl)
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(secret), s); err != nil || string(s.Data["clouds.yaml"]) != "v2" || gets != 2 {
		t.Fatalf("after the TTL: %q after %d GETs, want v2 after 2", s.Data["clouds.yaml"], gets)
	}
	// A missing Secret is not remembered as missing.
	missing := client.ObjectKey{Namespace: "crossplane-system", Name: "not-yet"}
	if err := c.Get(context.Background(), missing, &corev1.Secret{}); err == nil {
		t.Fatal("a missing Secret was found")
	}
	late := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "not-yet", Namespace: "crossplane-system"}}
	if err := kube.Create(context.Background(), late); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(context.Background(), missing, &corev1.Secret{}); err != nil {
		t.Fatalf("a Secret created after a failed read: %v", err)
	}
}

// versionsOf answers as the watch of Secrets' versions would, from the
// fake API server's Secrets, counting nothing.
type versionsOf struct{ c client.Client }

func (v versionsOf) Get(ctx context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	s := &corev1.Secret{}
	if err := v.c.Get(ctx, key, s); err != nil {
		return err
	}
	obj.SetResourceVersion(s.ResourceVersion)
	return nil
}

func (v versionsOf) List(context.Context, client.ObjectList, ...client.ListOption) error { return nil }

// counting is a fake API server holding objs, a client of it that counts
// the requests for Secrets by verb, and the watch of Secrets' versions.
func counting(objs ...client.Object) (client.WithWatch, versionsOf, map[string]int) {
	n := map[string]int{}
	base := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(objs...).Build()
	kube := interceptor.NewClient(base, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*corev1.Secret); ok {
				n["get"]++
			}
			return c.Get(ctx, key, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if _, ok := obj.(*corev1.Secret); ok {
				n["patch"]++
			}
			return c.Patch(ctx, obj, patch, opts...)
		},
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if _, ok := obj.(*corev1.Secret); ok {
				n["create"]++
			}
			return c.Create(ctx, obj, opts...)
		},
	})
	return kube, versionsOf{base}, n
}

// With the watch of versions, a kept Secret answers until it changes,
// whatever the TTL, and a rotated one is read at once.
func TestCachedUntilChanged(t *testing.T) {
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "cloud-admin", Namespace: "crossplane-system"}, Data: map[string][]byte{"clouds.yaml": []byte("v1")}}
	kube, versions, n := counting(secret)
	c := Cached(kube, versions, time.Hour)
	read := func() string {
		s := &corev1.Secret{}
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(secret), s); err != nil {
			t.Fatal(err)
		}
		return string(s.Data["clouds.yaml"])
	}
	for range 5 {
		read()
	}
	if n["get"] != 1 {
		t.Fatalf("5 reads of an unchanged Secret asked the API server %d times, want 1", n["get"])
	}
	secret.Data["clouds.yaml"] = []byte("v2")
	if err := kube.Update(context.Background(), secret); err != nil {
		t.Fatal(err)
	}
	if got := read(); got != "v2" || n["get"] != 2 {
		t.Fatalf("after a rotation: %q after %d GETs, want v2 after 2", got, n["get"])
	}
}

// crossplane-runtime's connection publisher, on the provider's client:
// publishing what the Secret already holds (a part of it, as every poll
// of a User does) sends nothing; a changed value is patched, and what
// was published before stays.
func TestPublishingWhatIsHeldSendsNothing(t *testing.T) {
	kube, versions, n := counting()
	c := Cached(kube, versions, time.Hour)
	types := runtime.NewScheme()
	if err := errors.Join(scheme.AddToScheme(types), keystonev1alpha1.AddToScheme(types)); err != nil {
		t.Fatal(err)
	}
	pub := managed.NewAPISecretPublisher(c, types)
	owner := &keystonev1alpha1.User{ObjectMeta: metav1.ObjectMeta{Name: "team-a-prod-tenant", UID: "u1"}}
	owner.SetGroupVersionKind(keystonev1alpha1.SchemeGroupVersion.WithKind("User"))
	owner.SetWriteConnectionSecretToReference(&xpv2.SecretReference{Name: "team-a-prod-tenant-user", Namespace: "crossplane-system"})
	ctx := context.Background()
	publish := func(c managed.ConnectionDetails) {
		t.Helper()
		if _, err := pub.PublishConnection(ctx, owner, c); err != nil {
			t.Fatal(err)
		}
	}
	publish(managed.ConnectionDetails{"password": []byte("s3cret"), "id": []byte("abc")})
	if n["create"] != 1 {
		t.Fatalf("the first publish created %d Secrets, want 1", n["create"])
	}
	before := n["get"] + n["patch"]
	for range 3 {
		publish(managed.ConnectionDetails{"id": []byte("abc")})
	}
	// The Secret is read once after its creation, then kept.
	if got := n["get"] + n["patch"] - before; got != 1 || n["patch"] != 0 {
		t.Fatalf("3 publishes of what the Secret holds sent %d requests (%d patches), want 1 read and no patch", got, n["patch"])
	}
	publish(managed.ConnectionDetails{"id": []byte("def")})
	if n["patch"] != 1 {
		t.Fatalf("a changed value sent %d patches, want 1", n["patch"])
	}
	s := &corev1.Secret{}
	if err := kube.Get(ctx, client.ObjectKey{Namespace: "crossplane-system", Name: "team-a-prod-tenant-user"}, s); err != nil {
		t.Fatal(err)
	}
	if string(s.Data["id"]) != "def" || string(s.Data["password"]) != "s3cret" {
		t.Fatalf("the Secret holds %q, want id def and the password kept", s.Data)
	}
}

// A merge patch that says more than a Secret's type, owners, labels,
// annotations and data is sent, whatever the Secret holds.
func TestOtherPatchesAreSent(t *testing.T) {
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "crossplane-system"}, Data: map[string][]byte{"k": []byte("v")}}
	kube, versions, n := counting(secret)
	c := Cached(kube, versions, time.Hour)
	ctx := context.Background()
	held := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(secret), held); err != nil {
		t.Fatal(err)
	}
	withFinalizer := held.DeepCopy()
	withFinalizer.Finalizers = []string{"example.org/keep"}
	if err := c.Patch(ctx, withFinalizer, client.MergeFrom(held)); err != nil {
		t.Fatal(err)
	}
	// A write forgets the Secret: read again, it is kept again.
	if err := c.Get(ctx, client.ObjectKeyFromObject(secret), held); err != nil {
		t.Fatal(err)
	}
	same := held.DeepCopy()
	if err := c.Patch(ctx, same, client.RawPatch(types.MergePatchType, []byte(`{"data":{"k":"dg=="}}`))); err != nil {
		t.Fatal(err)
	}
	// The same value as stringData, which the API server writes into data.
	if err := c.Patch(ctx, same, client.RawPatch(types.MergePatchType, []byte(`{"stringData":{"k":"v"}}`))); err != nil {
		t.Fatal(err)
	}
	if n["patch"] != 1 {
		t.Fatalf("%d patches sent, want 1: the finalizer's, not the ones of data the Secret holds", n["patch"])
	}
}
