package providerconfig

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

func TestCachedSecrets(t *testing.T) {
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
	c := CachedSecrets(kube, ttl)
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
