package integration

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gardenerv1alpha1 "github.com/c5c3/consumer-plane/apis/gardener/v1alpha1"
	input "github.com/c5c3/consumer-plane/apis/input/v1alpha1"
	"github.com/c5c3/consumer-plane/internal/gardener"
	"github.com/c5c3/consumer-plane/local/gardenerstandin"
	"github.com/c5c3/consumer-plane/test/kubetest"
)

// TestIntegrationShootKubeconfig: the provider requests an admin kubeconfig
// of a Shoot through Gardener's real shoots/adminkubeconfig subresource
// (gardener-apiserver, aggregated into the test's kube-apiserver), once
// gardenlet's part is done for the Shoot (its own kube-apiserver, whose CAs
// and address the Gardener stand-in publishes), writes it to the
// connection Secret, and requests a new one before the current one expires;
// the kubeconfig logs into the Shoot's cluster as Gardener's admins group.
// A missing Shoot gives a condition that names it.
func TestIntegrationShootKubeconfig(t *testing.T) {
	h := start(t)
	ctx := context.Background()

	// The garden is the test's API server, as in the demo.
	gardenKubeconfig := kubetest.Kubeconfig(t, h.config)
	settings := &input.ShootSettings{}
	settings.Default()
	gs, err := gardener.NewShoot(settings, gardener.Cluster{Name: h.name("hv"), Region: "eu-de-1", KubernetesVersion: "1.34",
		Workers: []gardener.Worker{{Name: "hv", MachineType: "baremetal-kvm", Minimum: 1, Maximum: 1, Zones: []string{"eu-de-1a"}}}})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(gs)
	if err != nil {
		t.Fatal(err)
	}
	shoot := &unstructured.Unstructured{Object: raw}
	h.create(t, shoot)
	t.Cleanup(func() { h.delete(t, shoot) })
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: shoot.GetNamespace()}}

	// gardenlet's part: the Shoot's cluster, published in the garden.
	clusters, err := gardenerstandin.NewClusters(t.TempDir(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(clusters.Stop)
	var cluster gardenerstandin.Cluster
	kubetest.Until(t, "the Shoot's cluster serves", 60*time.Second, func() error {
		c, serves, err := clusters.Ensure(shoot.GetNamespace(), shoot.GetName(), gardenerstandin.Spec{UID: string(shoot.GetUID()), Plugins: gardenerstandin.AdmissionPlugins(shoot)})
		if err != nil {
			return err
		}
		if !serves {
			return errors.New("starting")
		}
		cluster = c
		return nil
	})
	dyn, err := dynamic.NewForConfig(h.config)
	if err != nil {
		t.Fatal(err)
	}
	if err := gardenerstandin.Publish(ctx, dyn, shoot, cluster); err != nil {
		t.Fatal(err)
	}

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
	// The Shoot's cluster, as one of Gardener's admins, not the garden.
	if _, err := cs.CoreV1().Namespaces().Get(ctx, "kube-system", metav1.GetOptions{}); err != nil {
		t.Fatalf("the Secret's kubeconfig does not reach the Shoot's cluster: %v", err)
	}
	if _, err := cs.CoreV1().Namespaces().Get(ctx, ns.Name, metav1.GetOptions{}); !kerrors.IsNotFound(err) {
		t.Fatalf("the Secret's kubeconfig reaches the garden (namespace %s: %v), not the Shoot's cluster", ns.Name, err)
	}
	who, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authnv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if g := who.Status.UserInfo.Groups; !slices.Contains(g, "gardener.cloud:system:admins") {
		t.Fatalf("the kubeconfig's user is in groups %v, want gardener.cloud:system:admins (Gardener's admin kubeconfig)", g)
	}
	first := string(conn.Data["expiresAt"])
	if mg.Status.AtProvider.ExpiresAt == nil || mg.Status.AtProvider.Server != cluster.Server {
		t.Fatalf("status.atProvider = %+v, want expiresAt and server %s", mg.Status.AtProvider, cluster.Server)
	}

	// Renewal: 600 s kubeconfigs renewed 590 s before expiry are due after
	// 10 s; the next poll requests a new one.
	eventually(t, "kubeconfig renewed", func() (bool, string) {
		if err := h.kube.Get(ctx, client.ObjectKeyFromObject(conn), conn); err != nil {
			return false, err.Error()
		}
		return string(conn.Data["expiresAt"]) > first, "expiresAt still " + first
	})

	t.Run("a ServiceAccount's kubeconfig", func(t *testing.T) {
		// What the ServiceAccount may do in the Shoot's cluster is its
		// Role's: here, ConfigMaps of its namespace.
		saNS := h.name("sa")
		objs := []client.Object{
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: saNS}},
			&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "consumer", Namespace: saNS}},
			&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "consumer", Namespace: saNS},
				Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"create", "get"}}}},
			&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "consumer", Namespace: saNS},
				RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "consumer"},
				Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "consumer", Namespace: saNS}}},
		}
		admin, err := client.New(cfg, client.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			if err := admin.Create(ctx, o); err != nil {
				t.Fatal(err)
			}
		}
		t.Cleanup(func() { _ = admin.Delete(ctx, objs[0]) })

		sa := mg.DeepCopy()
		sa.ObjectMeta = metav1.ObjectMeta{Name: h.name("sa-access")}
		sa.Spec.ForProvider.ServiceAccountRef = &gardenerv1alpha1.ServiceAccountReference{Namespace: saNS, Name: "consumer"}
		sixty := int64(60)
		sa.Spec.ForProvider.RenewBeforeSeconds = &sixty
		sa.Spec.WriteConnectionSecretToReference = &xpv2.SecretReference{Name: h.name("sa-kubeconfig"), Namespace: "crossplane-system"}
		h.create(t, sa)
		h.waitReady(t, sa)
		s := &corev1.Secret{}
		if err := h.kube.Get(ctx, client.ObjectKey{Name: sa.Spec.WriteConnectionSecretToReference.Name, Namespace: "crossplane-system"}, s); err != nil {
			t.Fatalf("connection secret: %v", err)
		}
		if got, want := string(s.Data["serviceAccount"]), saNS+"/consumer"; got != want {
			t.Errorf("the Secret's serviceAccount is %q, want %q", got, want)
		}
		if expires, err := time.Parse(time.RFC3339, string(s.Data["expiresAt"])); err != nil || time.Until(expires) > 601*time.Second || time.Until(expires) < 500*time.Second {
			t.Errorf("the Secret's expiresAt is %q, want about 600 s from now (the token's lifetime)", s.Data["expiresAt"])
		}
		if strings.Contains(string(s.Data["kubeconfig"]), "client-certificate-data") {
			t.Error("the ServiceAccount's kubeconfig carries a client certificate (Gardener's admin credential)")
		}
		scfg, err := clientcmd.RESTConfigFromKubeConfig(s.Data[gardenerv1alpha1.ConnectionSecretKeyKubeconfig])
		if err != nil {
			t.Fatalf("the Secret's kubeconfig does not load: %v", err)
		}
		scs, err := kubernetes.NewForConfig(scfg)
		if err != nil {
			t.Fatal(err)
		}
		who, err := scs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authnv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("the ServiceAccount's kubeconfig does not log into the Shoot's cluster: %v", err)
		}
		if got, want := who.Status.UserInfo.Username, "system:serviceaccount:"+saNS+":consumer"; got != want {
			t.Fatalf("the kubeconfig logs in as %q, want %q", got, want)
		}
		if _, err := scs.CoreV1().ConfigMaps(saNS).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "allowed"}}, metav1.CreateOptions{}); err != nil {
			t.Errorf("the ServiceAccount may not do what its Role allows: %v", err)
		}
		if _, err := scs.CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{}); !kerrors.IsForbidden(err) {
			t.Errorf("listing kube-system's Secrets as the ServiceAccount: %v, want Forbidden", err)
		}

		// A ServiceAccount that does not exist is named in the condition.
		missing := sa.DeepCopy()
		missing.ObjectMeta = metav1.ObjectMeta{Name: h.name("no-sa-access")}
		missing.Spec.ForProvider.ServiceAccountRef.Name = "nobody"
		missing.Spec.WriteConnectionSecretToReference = &xpv2.SecretReference{Name: h.name("no-sa"), Namespace: "crossplane-system"}
		h.create(t, missing)
		h.waitSyncError(t, missing, "ServiceAccount "+saNS+"/nobody does not exist in the cluster of shoot", "spec.forProvider.serviceAccountRef")
		for _, o := range []*gardenerv1alpha1.ShootKubeconfig{missing, sa} {
			h.delete(t, o)
			h.waitGone(t, o)
		}
	})

	t.Run("a Shoot that does not exist", func(t *testing.T) {
		missing := mg.DeepCopy()
		missing.ObjectMeta = metav1.ObjectMeta{Name: h.name("no-shoot-access")}
		missing.Spec.ForProvider.ShootRef.Name = "no-such-shoot"
		missing.Spec.WriteConnectionSecretToReference = &xpv2.SecretReference{Name: h.name("no-shoot"), Namespace: "crossplane-system"}
		h.create(t, missing)
		h.waitSyncError(t, missing, "shoot garden-c5c3/no-such-shoot does not exist in the garden", "spec.forProvider.shootRef")
		h.delete(t, missing)
		h.waitGone(t, missing)
	})

	h.delete(t, mg)
	h.waitGone(t, mg)
}
