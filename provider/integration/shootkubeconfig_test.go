package integration

import (
	"context"
	"net/http/httptest"
	"testing"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gardenerv1alpha1 "github.com/c5c3/consumer-plane/apis/gardener/v1alpha1"
	"github.com/c5c3/consumer-plane/internal/gardenerstandin"
	"github.com/c5c3/consumer-plane/internal/kubetest"
)

// TestIntegrationShootKubeconfig: the provider requests an admin kubeconfig
// of a Shoot through shoots/adminkubeconfig (served by the Gardener
// stand-in in front of the real kube-apiserver, which holds the Shoot),
// writes it to the connection Secret, and requests a new one before the
// current one expires. A missing Shoot gives a condition that names it.
func TestIntegrationShootKubeconfig(t *testing.T) {
	h := start(t)
	ctx := context.Background()

	// The "Shoot's" admin kubeconfig is the API server's own, so the test
	// can prove the Secret's kubeconfig works.
	issued := kubetest.Kubeconfig(t, h.config)
	garden, err := gardenerstandin.New(h.config, func(string, string) []byte { return issued })
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(garden)
	t.Cleanup(srv.Close)
	gardenKubeconfig := kubetest.Kubeconfig(t, &rest.Config{Host: srv.URL})

	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "garden-kubeconfig", Namespace: "crossplane-system"},
		Data: map[string][]byte{"kubeconfig": gardenKubeconfig}}
	if err := h.kube.Create(ctx, secret); err != nil && !kerrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	pc := &gardenerv1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "garden"}, Spec: gardenerv1alpha1.ProviderConfigSpec{
		Credentials: gardenerv1alpha1.GardenCredentials{Source: xpv2.CredentialsSourceSecret, CommonCredentialSelectors: xpv2.CommonCredentialSelectors{
			SecretRef: &xpv2.SecretKeySelector{Key: "kubeconfig", SecretReference: xpv2.SecretReference{Name: secret.Name, Namespace: secret.Namespace}}}},
	}}
	if err := h.kube.Create(ctx, pc); err != nil && !kerrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "garden-cobaltcore"}}
	if err := h.kube.Create(ctx, ns); err != nil && !kerrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	shoot := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
		"metadata": map[string]any{"name": h.name("hv-pool"), "namespace": ns.Name},
		"spec":     map[string]any{"region": "eu-de-1", "provider": map[string]any{"type": "ironcore-metal"}, "kubernetes": map[string]any{"version": "1.33.0"}},
	}}
	h.create(t, shoot)

	sixHundred, renewAlmostAtOnce := int64(600), int64(590)
	mg := &gardenerv1alpha1.ShootKubeconfig{ObjectMeta: metav1.ObjectMeta{Name: h.name("hv-pool-access")}, Spec: gardenerv1alpha1.ShootKubeconfigSpec{
		ClusterManagedResourceSpec: xpv2.ClusterManagedResourceSpec{
			ProviderConfigReference:          ref(pc.Name),
			WriteConnectionSecretToReference: &xpv2.SecretReference{Name: h.name("hv-pool-kubeconfig"), Namespace: "crossplane-system"},
		},
		ForProvider: gardenerv1alpha1.ShootKubeconfigParameters{
			ShootRef:          gardenerv1alpha1.ShootReference{Name: shoot.GetName(), Namespace: ns.Name},
			ExpirationSeconds: &sixHundred, RenewBeforeSeconds: &renewAlmostAtOnce,
		},
	}}
	h.create(t, mg)
	h.waitReady(t, mg)

	conn := &corev1.Secret{}
	if err := h.kube.Get(ctx, client.ObjectKey{Name: mg.Spec.WriteConnectionSecretToReference.Name, Namespace: "crossplane-system"}, conn); err != nil {
		t.Fatalf("connection secret: %v", err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(conn.Data[gardenerv1alpha1.ConnectionSecretKeyKubeconfig])
	if err != nil {
		t.Fatalf("the Secret's kubeconfig does not load: %v", err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Namespaces().Get(ctx, ns.Name, metav1.GetOptions{}); err != nil {
		t.Fatalf("the Secret's kubeconfig does not reach the cluster: %v", err)
	}
	first := string(conn.Data["expiresAt"])
	if mg.Status.AtProvider.ExpiresAt == nil || mg.Status.AtProvider.Server != h.config.Host {
		t.Fatalf("status.atProvider = %+v, want expiresAt and server %s", mg.Status.AtProvider, h.config.Host)
	}

	// Renewal: 600 s kubeconfigs renewed 590 s before expiry are due after
	// 10 s; the next poll requests a new one.
	eventually(t, "kubeconfig renewed", func() (bool, string) {
		if err := h.kube.Get(ctx, client.ObjectKeyFromObject(conn), conn); err != nil {
			return false, err.Error()
		}
		return string(conn.Data["expiresAt"]) > first, "expiresAt still " + first
	})
	if n := garden.Issued.Load(); n < 2 {
		t.Fatalf("the stand-in issued %d kubeconfigs, want at least 2", n)
	}

	t.Run("a Shoot that does not exist", func(t *testing.T) {
		missing := mg.DeepCopy()
		missing.ObjectMeta = metav1.ObjectMeta{Name: h.name("no-shoot-access")}
		missing.Spec.ForProvider.ShootRef.Name = "no-such-shoot"
		missing.Spec.WriteConnectionSecretToReference = &xpv2.SecretReference{Name: h.name("no-shoot"), Namespace: "crossplane-system"}
		h.create(t, missing)
		h.waitSyncError(t, missing, "shoot garden-cobaltcore/no-such-shoot does not exist in the garden", "spec.forProvider.shootRef")
		h.delete(t, missing)
		h.waitGone(t, missing)
	})

	h.delete(t, mg)
	h.waitGone(t, mg)
}
