package providerconfig

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cephv1alpha1 "github.com/c5c3/consumer-plane/apis/ceph/v1alpha1"
	gardenerv1alpha1 "github.com/c5c3/consumer-plane/apis/gardener/v1alpha1"
	ironcorev1alpha1 "github.com/c5c3/consumer-plane/apis/ironcore/v1alpha1"
	kubernetesv1alpha1 "github.com/c5c3/consumer-plane/apis/kubernetes/v1alpha1"
	kvmv1alpha1 "github.com/c5c3/consumer-plane/apis/kvm/v1alpha1"
	openstackv1alpha1 "github.com/c5c3/consumer-plane/apis/openstack/v1alpha1"
	ovnv1alpha1 "github.com/c5c3/consumer-plane/apis/ovn/v1alpha1"
	"github.com/c5c3/consumer-plane/test/kubetest"
)

func TestMain(m *testing.M) { os.Exit(kubetest.Main(m, "../../../package/crds")) }

// kinds are what Setup serves, and the Secrets the guard protects.
var kinds = []func(*runtime.Scheme) error{
	clientgoscheme.AddToScheme, openstackv1alpha1.AddToScheme, gardenerv1alpha1.AddToScheme,
	ironcorev1alpha1.AddToScheme, kvmv1alpha1.AddToScheme, kubernetesv1alpha1.AddToScheme,
	ovnv1alpha1.AddToScheme, cephv1alpha1.AddToScheme,
}

// uncachedClient is a client of a real API server (kubetest) that reads
// and writes it directly, with the scheme of kinds: what the API server
// holds, not a cache's copy.
func uncachedClient(t *testing.T) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range kinds {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	kube, err := client.New(kubetest.Config(t), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return kube
}

// Against a real API server, the reconcilers of Setup count each
// ProviderConfig's users through the index (usersByIndex): its own usages
// among others', in status.users and in the guard of its Secret.
func TestUsersCountedIntegration(t *testing.T) {
	mgr := kubetest.Manager(t, kinds...)
	if err := Setup(mgr, controller.Options{Logger: logging.NewNopLogger(), GlobalRateLimiter: ratelimiter.NewGlobal(100), MaxConcurrentReconciles: 2}); err != nil {
		t.Fatal(err)
	}
	kube := kubetest.Start(t, mgr)
	ctx := t.Context()
	for _, pc := range []string{"counted-a", "counted-b"} {
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: pc}, Data: map[string][]byte{"clouds.yaml": []byte("clouds: {}")}}
		mustCreate(t, kube, secret)
		mustCreate(t, kube, openStackConfig(pc, secret))
	}
	mustCreate(t, kube, usages("counted-a", 3)...)
	mustCreate(t, kube, usages("counted-b", 2)...)

	want := map[string]int64{"counted-a": 3, "counted-b": 2}
	kubetest.Until(t, "each ProviderConfig counts its own users and guards its Secret", time.Minute, func() error {
		for name, n := range want {
			pc := &openstackv1alpha1.ProviderConfig{}
			if err := kube.Get(ctx, types.NamespacedName{Name: name}, pc); err != nil {
				return err
			}
			if pc.Status.Users != n {
				return fmt.Errorf("ProviderConfig %s counts %d users, want %d", name, pc.Status.Users, n)
			}
			// usersPatched writes the usage reconciler's finalizer by
			// its name: should crossplane-runtime rename it, an in-use
			// ProviderConfig would carry neither.
			if !slices.Contains(pc.Finalizers, usageFinalizer) {
				return fmt.Errorf("ProviderConfig %s, in use, has finalizers %v, want %s (crossplane-runtime's usage reconciler)", name, pc.Finalizers, usageFinalizer)
			}
			s := &corev1.Secret{}
			if err := kube.Get(ctx, types.NamespacedName{Namespace: "default", Name: name}, s); err != nil {
				return err
			}
			if fin := (CredentialsGuard{Config: openstackv1alpha1.SchemeGroupVersion.WithKind("ProviderConfig")}).guardFinalizer(name); !slices.Contains(s.Finalizers, fin) {
				return fmt.Errorf("the Secret of %s has finalizers %v, want %s", name, s.Finalizers, fin)
			}
		}
		return nil
	})
}

// BenchmarkCountUsers counts one ProviderConfig's users among those of
// COBALTCORE_BENCH_CONFIGS ProviderConfigs (default 1,000) of ten usages
// each, in the manager's cache of a real API server: as crossplane-runtime's
// usage reconciler lists them (by label, which the cache answers by walking
// every usage) and as usersByIndex answers the same list. Run with
// `go test -run '^$' -bench BenchmarkCountUsers -benchmem
// ./provider/internal/controller/providerconfig/` (docs/benchmarks.md).
func BenchmarkCountUsers(b *testing.B) {
	configs := 1000
	if v := os.Getenv("COBALTCORE_BENCH_CONFIGS"); v != "" {
		if _, err := fmt.Sscan(v, &configs); err != nil {
			b.Fatalf("COBALTCORE_BENCH_CONFIGS=%q: want a number of ProviderConfigs", v)
		}
	}
	const perConfig = 10
	mgr := kubetest.Manager(b, kinds...)
	if err := IndexUsers(context.Background(), mgr, &openstackv1alpha1.ProviderConfigUsage{}); err != nil {
		b.Fatal(err)
	}
	kube := kubetest.Start(b, mgr)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for w := range 16 {
		wg.Go(func() {
			for i := w; i < configs; i += 16 {
				for _, u := range usages(fmt.Sprintf("bench-%05d", i), perConfig) {
					if err := kube.Create(context.Background(), u); client.IgnoreAlreadyExists(err) != nil {
						errs <- err
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	cached := mgr.GetClient()
	ctx := context.Background()
	kubetest.Until(b, "the cache holds every usage", 5*time.Minute, func() error {
		l := &openstackv1alpha1.ProviderConfigUsageList{}
		if err := cached.List(ctx, l, client.UnsafeDisableDeepCopy); err != nil {
			return err
		}
		if len(l.Items) < configs*perConfig {
			return fmt.Errorf("%d of %d usages", len(l.Items), configs*perConfig)
		}
		return nil
	})
	for _, bc := range []struct {
		name string
		c    client.Client
	}{
		{"by_label", cached},
		{"by_index", usersByIndex{cached}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				l := &openstackv1alpha1.ProviderConfigUsageList{}
				pc := fmt.Sprintf("bench-%05d", i%configs)
				if err := bc.c.List(ctx, l, client.MatchingLabels{xpv2.LabelKeyProviderName: pc}); err != nil {
					b.Fatal(err)
				}
				if len(l.Items) != perConfig {
					b.Fatalf("%s: %d users, want %d", pc, len(l.Items), perConfig)
				}
				i++
			}
			b.ReportMetric(float64(configs*perConfig), "usages")
		})
	}
}

func openStackConfig(name string, secret *corev1.Secret) *openstackv1alpha1.ProviderConfig {
	return &openstackv1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: openstackv1alpha1.ProviderConfigSpec{
		Credentials: openstackv1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceSecret, Format: openstackv1alpha1.CredentialsFormatCloudsYAML, Cloud: "admin",
			CommonCredentialSelectors: xpv2.CommonCredentialSelectors{SecretRef: &xpv2.SecretKeySelector{Key: "clouds.yaml",
				SecretReference: xpv2.SecretReference{Name: secret.Name, Namespace: secret.Namespace}}}},
	}}
}

// usages are n usages of ProviderConfig pc, as crossplane-runtime's tracker
// makes them: labelled with its name, controlled by their managed resource.
func usages(pc string, n int) []client.Object {
	var out []client.Object
	for i := range n {
		u := &openstackv1alpha1.ProviderConfigUsage{ObjectMeta: metav1.ObjectMeta{
			Name:   fmt.Sprintf("%s-user-%d", pc, i),
			Labels: map[string]string{xpv2.LabelKeyProviderName: pc},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "keystone.openstack.cobaltcore.c5c3.io/v1alpha1", Kind: "Project",
				Name: fmt.Sprintf("%s-project-%d", pc, i), UID: types.UID(fmt.Sprintf("%s-%d", pc, i)), Controller: ptr.To(true)}},
		}}
		u.SetProviderConfigReference(xpv2.Reference{Name: pc})
		u.SetResourceReference(xpv2.TypedReference{APIVersion: "keystone.openstack.cobaltcore.c5c3.io/v1alpha1", Kind: "Project", Name: fmt.Sprintf("%s-project-%d", pc, i)})
		out = append(out, u)
	}
	return out
}

func mustCreate(t testing.TB, kube client.Client, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := kube.Create(t.Context(), o); err != nil {
			t.Fatal(err)
		}
	}
}
