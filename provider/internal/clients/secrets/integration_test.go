package secrets

import (
	"context"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/c5c3/consumer-plane/test/kubetest"
)

func TestMain(m *testing.M) { os.Exit(kubetest.Main(m)) }

// Against a real API server: the watch of Secrets' versions keeps no
// annotation (kubectl's last-applied copy of a Secret's data is one), the
// Cached client reads a Secret once while it is unchanged, and reads the
// rotated one as soon as the watch has seen it.
func TestVersionsIntegration(t *testing.T) {
	kube := kubetest.Client(t)
	ctx := t.Context()
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "cloud-admin", Namespace: "default",
		Annotations: map[string]string{"kubectl.kubernetes.io/last-applied-configuration": `{"data":{"clouds.yaml":"czNjcmV0"}}`}},
		Data: map[string][]byte{"clouds.yaml": []byte("s3cret")}}
	if err := kube.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	c, err := cache.New(kubetest.Config(t), cache.Options{Scheme: clientgoscheme.Scheme,
		ByObject: map[client.Object]cache.ByObject{Version(): {Transform: VersionOnly}}})
	if err != nil {
		t.Fatal(err)
	}
	versions, err := Versions(c)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = c.Start(ctx) }()
	version := func() *metav1.PartialObjectMetadata {
		m := Version()
		if err := versions.Get(ctx, client.ObjectKeyFromObject(secret), m); err != nil {
			return nil
		}
		return m
	}
	var m *metav1.PartialObjectMetadata
	kubetest.Until(t, "the watch of Secrets' versions answers", 30*time.Second, func() error {
		if m = version(); m == nil {
			return errNotSynced
		}
		return nil
	})
	if m.ResourceVersion != secret.ResourceVersion || len(m.Annotations) > 0 || len(m.ManagedFields) > 0 {
		t.Fatalf("the watch holds version %q, annotations %v and %d managed fields; want %q and nothing else", m.ResourceVersion, m.Annotations, len(m.ManagedFields), secret.ResourceVersion)
	}

	direct, err := client.NewWithWatch(kubetest.Config(t), client.Options{Scheme: clientgoscheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	gets := 0
	counted := interceptor.NewClient(direct, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			gets++
			return c.Get(ctx, key, obj, opts...)
		},
	})
	cached := Cached(counted, versions, time.Hour)
	read := func() string {
		s := &corev1.Secret{}
		if err := cached.Get(ctx, client.ObjectKeyFromObject(secret), s); err != nil {
			t.Fatal(err)
		}
		return string(s.Data["clouds.yaml"])
	}
	for range 3 {
		read()
	}
	if gets != 1 {
		t.Fatalf("3 reads of an unchanged Secret: %d GETs, want 1", gets)
	}
	secret.Data["clouds.yaml"] = []byte("rotated")
	if err := kube.Update(ctx, secret); err != nil {
		t.Fatal(err)
	}
	kubetest.Until(t, "the rotated Secret is read", 30*time.Second, func() error {
		if got := read(); got != "rotated" {
			return errNotSynced
		}
		return nil
	})
}
