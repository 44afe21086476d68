// Package shootkubeconfig keeps a Secret with a fresh kubeconfig of a
// Gardener Shoot: Gardener's admin, or a ServiceAccount of the Shoot's
// cluster.
//
// Gardener can't revoke or list the kubeconfigs it issued, so there is no
// external object to observe: the connection Secret is the state. Observe
// reads it; a missing Secret means "create" (request one), a kubeconfig
// within renewBeforeSeconds of its expiry (half way through its real
// lifetime when that is not longer) means "update" (request a new one); the reconciler
// publishes what Create and Update return.
package shootkubeconfig

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/consumer-plane/apis/gardener/v1alpha1"
	"github.com/c5c3/consumer-plane/provider/internal/clients/gardener"
	kubeconfigs "github.com/c5c3/consumer-plane/provider/internal/clients/kubeconfig"
	pcontroller "github.com/c5c3/consumer-plane/provider/internal/controller"
	"github.com/c5c3/consumer-plane/provider/internal/controller/providerconfig"
)

// Connection secret keys besides the kubeconfig.
const (
	keyExpiresAt = "expiresAt"
	keyIssuedAt  = "issuedAt"
	keyServer    = "server"
	// keyServiceAccount names the ServiceAccount the kubeconfig logs in as
	// (namespace/name); empty for Gardener's admin.
	keyServiceAccount = "serviceAccount"
)

// adminLifetime is the lifetime of the admin kubeconfig a ServiceAccount's
// token is requested with: the least Gardener issues.
const adminLifetime = 600 * time.Second

// Defaults of the CRD, for objects written before defaulting.
const (
	defaultLifetime    = 86400 * time.Second
	defaultRenewBefore = 21600 * time.Second
)

// Setup adds the ShootKubeconfig controller. inCluster is the provider's own
// REST config, used by ProviderConfigs with source InjectedIdentity.
func Setup(mgr ctrl.Manager, o controller.Options, gardens *gardener.Clients) error {
	c := &connector{kube: mgr.GetClient(), gardens: gardens, inCluster: mgr.GetConfig(), now: time.Now}
	return pcontroller.SetupManaged(mgr, o, v1alpha1.SchemeGroupVersion.WithKind(v1alpha1.ShootKubeconfigKind), &v1alpha1.ShootKubeconfigList{},
		managed.WithTypedExternalConnector[*v1alpha1.ShootKubeconfig](c))
}

type connector struct {
	kube      client.Client
	gardens   *gardener.Clients
	inCluster *rest.Config
	now       func() time.Time
}

// Connect returns a client of the garden cluster the ProviderConfig names.
func (c *connector) Connect(ctx context.Context, mg *v1alpha1.ShootKubeconfig) (managed.TypedExternalClient[*v1alpha1.ShootKubeconfig], error) {
	pc := &v1alpha1.ProviderConfig{}
	if err := providerconfig.Get(ctx, c.kube, mg, &v1alpha1.ProviderConfigUsage{}, pc); err != nil {
		return nil, err
	}
	var (
		g   gardener.Garden
		err error
	)
	switch pc.Spec.Credentials.Source { //nolint:exhaustive // the CRD admits only these two.
	case xpv2.CredentialsSourceInjectedIdentity:
		g, err = gardener.ForConfig(c.inCluster)
	default:
		var kubeconfig []byte
		kubeconfig, err = resource.CommonCredentialExtractor(ctx, pc.Spec.Credentials.Source, c.kube, pc.Spec.Credentials.CommonCredentialSelectors)
		if err != nil {
			return nil, fmt.Errorf("cannot read the garden kubeconfig of ProviderConfig %q: %w", pc.Name, err)
		}
		g, err = c.gardens.ForKubeconfig(kubeconfig)
	}
	if err != nil {
		return nil, fmt.Errorf("ProviderConfig %q: %w", pc.Name, err)
	}
	return &external{kube: c.kube, garden: g, now: c.now}, nil
}

type external struct {
	kube   client.Client
	garden gardener.Garden
	now    func() time.Time
}

func (e *external) Observe(ctx context.Context, mg *v1alpha1.ShootKubeconfig) (managed.ExternalObservation, error) {
	if pcontroller.DeletionDone(mg) {
		pcontroller.ConfirmGone(mg)
		return managed.ExternalObservation{}, nil
	}
	ref := mg.Spec.WriteConnectionSecretToReference
	if ref == nil {
		return managed.ExternalObservation{}, fmt.Errorf("spec.writeConnectionSecretToRef is required: the kubeconfig is written to that Secret")
	}
	s := &corev1.Secret{}
	err := e.kube.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, s)
	if kerrors.IsNotFound(err) {
		return managed.ExternalObservation{}, nil
	}
	if err != nil {
		return managed.ExternalObservation{}, fmt.Errorf("cannot read connection Secret %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	expires, err := time.Parse(time.RFC3339, string(s.Data[keyExpiresAt]))
	if len(s.Data[v1alpha1.ConnectionSecretKeyKubeconfig]) == 0 || err != nil {
		// A Secret we did not fill (or an older format): issue one.
		return managed.ExternalObservation{}, nil
	}
	at := metav1.NewTime(expires)
	mg.Status.AtProvider.ExpiresAt = &at
	mg.Status.AtProvider.Server = string(s.Data[keyServer])
	if !expires.After(e.now()) {
		mg.SetConditions(xpv2.Unavailable().WithMessage("the kubeconfig expired at " + expires.Format(time.RFC3339)))
	} else {
		mg.SetConditions(xpv2.Available())
	}
	renewAt := expires.Add(-renewWindow(mg.Spec.ForProvider, s.Data[keyIssuedAt], expires))
	// A kubeconfig of another identity than the spec asks for is replaced.
	sameUser := string(s.Data[keyServiceAccount]) == serviceAccount(mg.Spec.ForProvider)
	return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: sameUser && e.now().Before(renewAt)}, nil
}

func (e *external) Create(ctx context.Context, mg *v1alpha1.ShootKubeconfig) (managed.ExternalCreation, error) {
	cd, err := e.issue(ctx, mg)
	return managed.ExternalCreation{ConnectionDetails: cd}, err
}

func (e *external) Update(ctx context.Context, mg *v1alpha1.ShootKubeconfig) (managed.ExternalUpdate, error) {
	cd, err := e.issue(ctx, mg)
	return managed.ExternalUpdate{ConnectionDetails: cd}, err
}

func (e *external) issue(ctx context.Context, mg *v1alpha1.ShootKubeconfig) (managed.ConnectionDetails, error) {
	p := mg.Spec.ForProvider
	adminFor := lifetime(p)
	if p.ServiceAccountRef != nil {
		adminFor = adminLifetime
	}
	kc, err := e.garden.AdminKubeconfig(ctx, p.ShootRef.Namespace, p.ShootRef.Name, adminFor)
	if err != nil {
		return nil, explain(p.ShootRef, err)
	}
	if sa := p.ServiceAccountRef; sa != nil {
		t, err := kubeconfigs.ForServiceAccount(ctx, kc.Data, sa.Namespace, sa.Name, lifetime(p))
		if err != nil {
			return nil, explainServiceAccount(p.ShootRef, *sa, err)
		}
		kc.Data, kc.ExpiresAt = t.Data, t.ExpiresAt
	}
	issued := metav1.NewTime(e.now())
	expires := metav1.NewTime(kc.ExpiresAt)
	mg.Status.AtProvider = v1alpha1.ShootKubeconfigObservation{Server: kc.Server, IssuedAt: &issued, ExpiresAt: &expires}
	return managed.ConnectionDetails{
		v1alpha1.ConnectionSecretKeyKubeconfig: kc.Data,
		keyExpiresAt:                           []byte(kc.ExpiresAt.UTC().Format(time.RFC3339)),
		keyIssuedAt:                            []byte(issued.UTC().Format(time.RFC3339)),
		keyServer:                              []byte(kc.Server),
		keyServiceAccount:                      []byte(serviceAccount(p)),
	}, nil
}

// Delete has nothing to revoke: Gardener's admin kubeconfigs are
// short-lived client certificates that expire on their own, and so do the
// ServiceAccount tokens (and die with their ServiceAccount). The connection
// Secret goes with the resource (it is owned by it).
func (e *external) Delete(context.Context, *v1alpha1.ShootKubeconfig) (managed.ExternalDelete, error) {
	return managed.ExternalDelete{}, nil
}

func (e *external) Disconnect(context.Context) error { return nil }

func explain(s v1alpha1.ShootReference, err error) error {
	switch {
	case kerrors.IsNotFound(err):
		return fmt.Errorf("shoot %s/%s does not exist in the garden (spec.forProvider.shootRef): %w", s.Namespace, s.Name, err)
	case kerrors.IsForbidden(err):
		return fmt.Errorf("the garden credentials may not create shoots/adminkubeconfig for %s/%s (needs verb create on that subresource in namespace %s): %w", s.Namespace, s.Name, s.Namespace, err)
	case strings.Contains(err.Error(), "the server could not find the requested resource"):
		return fmt.Errorf("the garden cluster does not serve shoots/adminkubeconfig (is it a Gardener garden cluster?): %w", err)
	}
	return fmt.Errorf("cannot request an admin kubeconfig of shoot %s/%s: %w", s.Namespace, s.Name, err)
}

func explainServiceAccount(s v1alpha1.ShootReference, sa v1alpha1.ServiceAccountReference, err error) error {
	switch {
	case kerrors.IsNotFound(err):
		return fmt.Errorf("ServiceAccount %s/%s does not exist in the cluster of shoot %s/%s (spec.forProvider.serviceAccountRef): %w", sa.Namespace, sa.Name, s.Namespace, s.Name, err)
	case kerrors.IsForbidden(err):
		return fmt.Errorf("the admin kubeconfig of shoot %s/%s may not create serviceaccounts/token for %s/%s: %w", s.Namespace, s.Name, sa.Namespace, sa.Name, err)
	}
	return fmt.Errorf("cannot request a token of ServiceAccount %s/%s in shoot %s/%s: %w", sa.Namespace, sa.Name, s.Namespace, s.Name, err)
}

// serviceAccount is what the connection Secret records of the identity the
// spec asks for.
func serviceAccount(p v1alpha1.ShootKubeconfigParameters) string {
	if p.ServiceAccountRef == nil {
		return ""
	}
	return p.ServiceAccountRef.Namespace + "/" + p.ServiceAccountRef.Name
}

func lifetime(p v1alpha1.ShootKubeconfigParameters) time.Duration {
	if p.ExpirationSeconds == nil {
		return defaultLifetime
	}
	return time.Duration(*p.ExpirationSeconds) * time.Second
}

func renewBefore(p v1alpha1.ShootKubeconfigParameters) time.Duration {
	if p.RenewBeforeSeconds == nil {
		return defaultRenewBefore
	}
	return time.Duration(*p.RenewBeforeSeconds) * time.Second
}

// renewWindow is how long before its expiry a kubeconfig is renewed:
// renewBeforeSeconds, unless that is not shorter than the lifetime it
// really got, then half that lifetime. Gardener (or a token's issuer) may
// issue a shorter one than asked for; renewing it renewBeforeSeconds early
// would then request a new one on every poll. issuedAt is what the
// connection Secret recorded; a Secret written before it did is taken to
// have the lifetime the spec asks for.
func renewWindow(p v1alpha1.ShootKubeconfigParameters, issuedAt []byte, expires time.Time) time.Duration {
	lived := lifetime(p)
	if issued, err := time.Parse(time.RFC3339, string(issuedAt)); err == nil {
		lived = expires.Sub(issued)
	}
	if before := renewBefore(p); before < lived {
		return before
	}
	return lived / 2
}
