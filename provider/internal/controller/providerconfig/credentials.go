package providerconfig

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// CredentialsGuard keeps the credentials Secret of a ProviderConfig in use
// from going away before its users: a finalizer on the Secret while the
// ProviderConfig has users, removed once it has none.
//
// Why: a composite's resources are deleted together. When the Secret is
// itself composed — a cloud's admin clouds.yaml is the connection secret of
// a provider-kubernetes Object — it would go first, and every managed
// resource of the cloud would fail to connect and so never delete its
// external object (the cloud's project, aggregates and volume types would
// leak). With the finalizer the Secret stays readable while terminating,
// the resources delete their objects, the ProviderConfig loses its users
// and is deleted, and the Secret follows.
type CredentialsGuard struct {
	Kube client.Client
	// Live reads the API server, past the cache, when the cache lags a
	// ProviderConfig's finalizers (patchMetadata).
	Live   client.Reader
	Config schema.GroupVersionKind
	// UsageList is the kind of the ProviderConfig's usage list: users are
	// counted here rather than read from status.users, which the usage
	// reconciler stops updating once the ProviderConfig is being deleted.
	UsageList schema.GroupVersionKind
	// SecretRef is the path of the ProviderConfig's reference to its
	// Secret (namespace, name); spec.credentials.secretRef when nil.
	SecretRef []string
}

// secretRefPath is where the ProviderConfig names its Secret.
func (g CredentialsGuard) secretRefPath() []string {
	if g.SecretRef != nil {
		return g.SecretRef
	}
	return []string{"spec", "credentials", "secretRef"}
}

// guardFinalizer is the finalizer this ProviderConfig puts on its Secret
// (one per ProviderConfig: a Secret may serve several) and on itself, so
// that it is still there to release the Secret after its users are gone.
func (g CredentialsGuard) guardFinalizer(pc string) string {
	name := "credentials-of-" + pc
	if len(name) > 63 {
		h := sha256.Sum256([]byte(pc))
		name = "credentials-of-" + hex.EncodeToString(h[:])[:40]
	}
	return g.Config.Group + "/" + name
}

// Reconcile protects or releases the Secret of one ProviderConfig.
//
// It reads the ProviderConfig and its usages as the scheme's typed kinds,
// so both come from the manager's cache (the usages are watched anyway),
// the usages through the index of IndexUsers: it runs on every new user,
// and listing a ProviderConfig's usages from the API server each time cost
// the API server and the provider work that grew with the square of the
// users (#24 §5), as walking every usage in the cache did (#55).
func (g CredentialsGuard) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	pc, err := g.object(g.Config)
	if err != nil {
		return reconcile.Result{}, err
	}
	if err := g.Kube.Get(ctx, req.NamespacedName, pc); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	fin := g.guardFinalizer(pc.GetName())
	l, err := g.Kube.Scheme().New(g.UsageList)
	if err != nil {
		return reconcile.Result{}, err
	}
	usages, ok := l.(client.ObjectList)
	if !ok {
		return reconcile.Result{}, fmt.Errorf("%s is not a list", g.UsageList)
	}
	// Only counted: the cache's objects need not be copied.
	if err := g.Kube.List(ctx, usages, usersOf(pc.GetName()), client.UnsafeDisableDeepCopy); err != nil {
		return reconcile.Result{}, fmt.Errorf("cannot count the users of ProviderConfig %s: %w", pc.GetName(), err)
	}
	users := apimeta.LenList(usages)
	fields, err := runtime.DefaultUnstructuredConverter.ToUnstructured(pc)
	if err != nil {
		return reconcile.Result{}, err
	}
	path := g.secretRefPath()
	ns, _, _ := unstructured.NestedString(fields, append(slices.Clone(path), "namespace")...)
	name, _, _ := unstructured.NestedString(fields, append(slices.Clone(path), "name")...)
	current := ""
	if name != "" {
		current = ns + "/" + name
	}
	// A ProviderConfig being deleted still has users until they are gone
	// (the usage reconciler blocks its deletion): protect by users alone.
	protect := users > 0
	ann := g.Config.Group + "/guarded-secret"
	guarded := pc.GetAnnotations()[ann]

	// A Secret the ProviderConfig no longer names is released first, so a
	// changed reference leaves no finalizer behind on the old one.
	if guarded != "" && guarded != current {
		if err := g.secret(ctx, secretKey(guarded), fin, false); err != nil {
			return requeueOnConflict(err)
		}
	}
	if protect {
		// The ProviderConfig records what it guards before guarding it.
		if err := g.mark(ctx, pc, fin, true, ann, current); err != nil {
			return requeueOnConflict(err)
		}
		if current != "" {
			if err := g.secret(ctx, secretKey(current), fin, true); err != nil {
				return requeueOnConflict(err)
			}
		}
		return reconcile.Result{}, nil
	}
	if current != "" {
		if err := g.secret(ctx, secretKey(current), fin, false); err != nil {
			return requeueOnConflict(err)
		}
	}
	if err := g.mark(ctx, pc, fin, false, ann, ""); err != nil {
		return requeueOnConflict(err)
	}
	return reconcile.Result{}, nil
}

// object is an empty object of the scheme's type for gvk.
func (g CredentialsGuard) object(gvk schema.GroupVersionKind) (client.Object, error) {
	o, err := g.Kube.Scheme().New(gvk)
	if err != nil {
		return nil, err
	}
	obj, ok := o.(client.Object)
	if !ok {
		return nil, fmt.Errorf("%s is not an object", gvk)
	}
	return obj, nil
}

// mark gives the ProviderConfig finalizer fin (or takes it away) and the
// annotation ann naming the guarded Secret (none when empty), patching it
// only when something differs, and only those two (patchMetadata): the
// usage reconciler and the users' count write the same ProviderConfig.
func (g CredentialsGuard) mark(ctx context.Context, pc client.Object, fin string, keep bool, ann, guarded string) error {
	return patchMetadata(ctx, g.Kube, g.Live, pc, func(o client.Object) {
		setFinalizer(o, fin, keep)
		a := o.GetAnnotations()
		if guarded == "" {
			delete(a, ann)
		} else {
			if a == nil {
				a = map[string]string{}
			}
			a[ann] = guarded
		}
		o.SetAnnotations(a)
	})
}

func secretKey(namespaced string) types.NamespacedName {
	ns, name, _ := strings.Cut(namespaced, "/")
	return types.NamespacedName{Namespace: ns, Name: name}
}

// requeueOnConflict reads the object again at once when someone else
// changed it since it was read (the catalog reader writes the status of
// the same ProviderConfigs): a race, not an error to log.
func requeueOnConflict(err error) (reconcile.Result, error) {
	if kerrors.IsConflict(err) {
		return reconcile.Result{Requeue: true}, nil
	}
	return reconcile.Result{}, err
}

// secret adds (protect) or removes the finalizer on the Secret.
func (g CredentialsGuard) secret(ctx context.Context, key types.NamespacedName, fin string, protect bool) error {
	s := &corev1.Secret{}
	if err := g.Kube.Get(ctx, key, s); err != nil {
		if kerrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("cannot get credentials Secret %s: %w", key, err)
	}
	switch {
	case protect && !meta.FinalizerExists(s, fin) && !meta.WasDeleted(s):
		meta.AddFinalizer(s, fin)
	case !protect && meta.FinalizerExists(s, fin):
		meta.RemoveFinalizer(s, fin)
	default:
		return nil
	}
	if err := g.Kube.Update(ctx, s); err != nil && !kerrors.IsNotFound(err) {
		return fmt.Errorf("cannot update the finalizers of credentials Secret %s: %w", key, err)
	}
	return nil
}

// SetupCredentialsGuard adds a CredentialsGuard for a ProviderConfig kind
// that names its Secret at secretRef (nil: spec.credentials.secretRef). It
// runs on every change of a ProviderConfig but its status, and of its
// usages (at most once per UsersCountedEvery). It counts the usages
// through the index IndexUsers registers for usage.
func SetupCredentialsGuard(mgr ctrl.Manager, o controller.Options, of resource.ProviderConfigKinds, config, usage client.Object, secretRef []string) error {
	name := "credentials-guard/" + of.Config.Group
	return ctrl.NewControllerManagedBy(mgr).
		Named(name).
		WithOptions(o.ForControllerRuntime()).
		For(config, builder.WithPredicates(NotOnlyStatus())).
		Watches(usage, UsersChanged(UsersCountedEvery)).
		Complete(ratelimiter.NewReconciler(name, CredentialsGuard{Kube: mgr.GetClient(), Live: mgr.GetAPIReader(), Config: of.Config, UsageList: of.UsageList, SecretRef: secretRef}, o.GlobalRateLimiter))
}
