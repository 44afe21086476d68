package integration

import (
	"context"
	"strings"
	"testing"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	keystonev1alpha1 "github.com/c5c3/consumer-plane/apis/keystone/v1alpha1"
	novav1alpha1 "github.com/c5c3/consumer-plane/apis/nova/v1alpha1"
	openstackv1alpha1 "github.com/c5c3/consumer-plane/apis/openstack/v1alpha1"
)

// A cloud's credentials Secret and everything that uses it are deleted,
// the Secret first (as when a composite goes: its admin clouds.yaml is
// itself composed). The Secret must stay, and serve its users, until the
// Project has deleted its Keystone project and the QuotaSet is gone, then
// go; nothing may leak or hang.
func TestIntegrationCredentialsOutliveTheirUsers(t *testing.T) {
	h := withOpenStack(t)
	ctx := context.Background()
	secret := cloudCredential(h.name("guarded-clouds"), keystoneURL, "admin")
	h.create(t, secret)
	pc := cloudsYAMLConfig(h.name("guarded"), secret.Namespace, secret.Name, "")
	h.create(t, pc)
	p := h.readyProject(t, h.name("guarded-project"), pc.Name)
	name, id := p.Name, p.GetAnnotations()["crossplane.io/external-name"]
	// Nova checks a quota set's project with Keystone: once the project is
	// gone its quotas answer 400, which must count as gone too.
	q := &novav1alpha1.QuotaSet{ObjectMeta: metav1.ObjectMeta{Name: h.name("guarded-quota")}, Spec: novav1alpha1.QuotaSetSpec{
		ClusterManagedResourceSpec: managedBy(pc.Name),
		ForProvider: novav1alpha1.QuotaSetParameters{
			ProjectIDReference: keystonev1alpha1.ProjectIDReference{ProjectIDRef: &xpv2.Reference{Name: name}}, Cores: ptr(7),
		},
	}}
	h.create(t, q)
	h.waitReady(t, q)

	eventually(t, "the Secret carries the ProviderConfig's finalizer", func() (bool, string) {
		s := &corev1.Secret{}
		if err := h.kube.Get(ctx, client.ObjectKeyFromObject(secret), s); err != nil {
			return false, err.Error()
		}
		return len(s.Finalizers) == 1, "finalizers: " + strings.Join(s.Finalizers, ",")
	})

	// The Secret first, alone: while its ProviderConfig has users it is
	// held (deleted, still there), and the users go on with it: a change
	// of the Project still reaches Keystone.
	if err := h.kube.Delete(ctx, secret); err != nil {
		t.Fatalf("delete %s: %v", secret.GetName(), err)
	}
	held := &corev1.Secret{}
	if err := h.kube.Get(ctx, client.ObjectKeyFromObject(secret), held); err != nil || held.DeletionTimestamp == nil {
		t.Fatalf("the credentials Secret of a ProviderConfig with users is not held once deleted (it must stay until they are gone): %v", err)
	}
	if err := h.kube.Get(ctx, client.ObjectKeyFromObject(p), p); err != nil {
		t.Fatal(err)
	}
	p.Spec.ForProvider.Description = "changed after its credentials Secret was deleted"
	if err := h.kube.Update(ctx, p); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a change of the Project reaches Keystone while its credentials Secret is held", func() (bool, string) {
		kp, err := clientsOf(h).keystone.GetProject(ctx, id)
		if err != nil {
			return false, err.Error()
		}
		return kp.Description == p.Spec.ForProvider.Description, "description " + kp.Description
	})

	// Then the rest at once, the project before its quotas.
	for _, o := range []client.Object{pc, p, q} {
		if err := h.kube.Delete(ctx, o); err != nil {
			t.Fatalf("delete %s: %v", o.GetName(), err)
		}
	}
	h.waitGone(t, p)
	h.waitGone(t, q)
	if _, err := clientsOf(h).keystone.GetProject(ctx, id); err == nil {
		t.Errorf("Keystone project %s (%s) is left behind", name, id)
	}
	// The provider caches credentials and sessions, so the deletions above
	// may have gone through without the Secret: the guard shows itself in
	// the Secret, still there (deleted, held by its finalizer) as long as
	// the ProviderConfig has users.
	if err := h.kube.Get(ctx, client.ObjectKeyFromObject(secret), held); err != nil || held.DeletionTimestamp == nil {
		t.Fatalf("the credentials Secret of a ProviderConfig in use is not held (deleted before its users): %v", err)
	}
	// The Project's ProviderConfigUsage goes by owner-reference garbage
	// collection, which this API server (no kube-controller-manager) does
	// not run: remove it as the collector would.
	if err := h.kube.DeleteAllOf(ctx, &openstackv1alpha1.ProviderConfigUsage{}, client.MatchingLabels{xpv2.LabelKeyProviderName: pc.Name}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the ProviderConfig and then the Secret are gone", func() (bool, string) {
		errPC := h.kube.Get(ctx, client.ObjectKeyFromObject(pc), &openstackv1alpha1.ProviderConfig{})
		errS := h.kube.Get(ctx, client.ObjectKeyFromObject(secret), &corev1.Secret{})
		return kerrors.IsNotFound(errPC) && kerrors.IsNotFound(errS), "ProviderConfig: " + errString(errPC) + "; Secret: " + errString(errS)
	})
}

// readyProject makes a Keystone Project of ProviderConfig pc and waits
// until it is Ready.
func (h *harness) readyProject(t *testing.T, name, pc string) *keystonev1alpha1.Project {
	t.Helper()
	p := &keystonev1alpha1.Project{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: keystonev1alpha1.ProjectSpec{
		ClusterManagedResourceSpec: managedBy(pc),
		ForProvider:                keystonev1alpha1.ProjectParameters{Name: name, Tags: []string{"cobaltcore-test"}},
	}}
	h.create(t, p)
	h.waitReady(t, p)
	return p
}

func errString(err error) string {
	if err == nil {
		return "still there"
	}
	return err.Error()
}

// A ProviderConfig in use pointed at another Secret (credentials rotated
// into a new Secret) releases the old one: it carries no finalizer of the
// ProviderConfig and can be deleted, while the new one is guarded.
func TestIntegrationCredentialsGuardFollowsTheReference(t *testing.T) {
	h := withOpenStack(t)
	ctx := context.Background()
	old := cloudCredential(h.name("rotated-old"), keystoneURL, "admin")
	next := cloudCredential(h.name("rotated-new"), keystoneURL, "admin")
	h.create(t, old)
	h.create(t, next)
	pc := cloudsYAMLConfig(h.name("rotated"), old.Namespace, old.Name, "")
	h.create(t, pc)
	p := h.readyProject(t, h.name("rotated-project"), pc.Name)
	finalizers := func(s *corev1.Secret) (int, string) {
		got := &corev1.Secret{}
		if err := h.kube.Get(ctx, client.ObjectKeyFromObject(s), got); err != nil {
			return -1, err.Error()
		}
		return len(got.Finalizers), "finalizers of " + s.Name + ": " + strings.Join(got.Finalizers, ",")
	}
	eventually(t, "the old Secret is guarded", func() (bool, string) { n, why := finalizers(old); return n == 1, why })

	h.update(t, pc, func() { pc.Spec.Credentials.SecretRef.Name = next.Name })
	eventually(t, "the new Secret is guarded and the old released", func() (bool, string) {
		n, whyNew := finalizers(next)
		o, whyOld := finalizers(old)
		return n == 1 && o == 0, whyNew + "; " + whyOld
	})
	h.delete(t, old)
	eventually(t, "the old Secret deletes", func() (bool, string) {
		err := h.kube.Get(ctx, client.ObjectKeyFromObject(old), &corev1.Secret{})
		return kerrors.IsNotFound(err), errString(err)
	})

	h.delete(t, p)
	h.waitGone(t, p)
	if err := h.kube.DeleteAllOf(ctx, &openstackv1alpha1.ProviderConfigUsage{}, client.MatchingLabels{xpv2.LabelKeyProviderName: pc.Name}); err != nil {
		t.Fatal(err)
	}
	h.delete(t, pc)
	h.delete(t, next)
	eventually(t, "the ProviderConfig and the new Secret are gone", func() (bool, string) {
		errPC := h.kube.Get(ctx, client.ObjectKeyFromObject(pc), &openstackv1alpha1.ProviderConfig{})
		errS := h.kube.Get(ctx, client.ObjectKeyFromObject(next), &corev1.Secret{})
		return kerrors.IsNotFound(errPC) && kerrors.IsNotFound(errS), "ProviderConfig: " + errString(errPC) + "; Secret: " + errString(errS)
	})
}
