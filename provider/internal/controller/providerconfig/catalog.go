package providerconfig

import (
	"context"
	"slices"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	openstackv1alpha1 "github.com/c5c3/consumer-plane/apis/openstack/v1alpha1"
	"github.com/c5c3/consumer-plane/provider/internal/clients/openstack"
)

// terminalBackoff is how many polls a ProviderConfig whose credentials or
// Keystone URL are refused waits before its catalog is read again (a change
// of the ProviderConfig reads it at once).
const terminalBackoff = 10

// Reasons of the CatalogRead condition.
const (
	reasonCatalogRead    xpv2.ConditionReason = "Read"
	reasonCatalogFailing xpv2.ConditionReason = "ReadFailed"
)

// CatalogReader reports in an OpenStack ProviderConfig's status which
// services the cloud's Keystone catalog serves in its region, so that a
// Composition composes a service's objects only when the cloud has that
// service: a cloud whose control plane runs no Nova must not wait forever
// on aggregates it cannot have. The catalog is the one of the session's
// token (the session cache shares it with every managed resource of the
// ProviderConfig), so reading it issues no token and no request.
type CatalogReader struct {
	OpenStack OpenStack
	Log       logging.Logger
	Record    event.Recorder
	// Poll is how often the catalog is read again.
	Poll time.Duration
}

// SetupCatalog adds the CatalogReader of OpenStack ProviderConfigs.
func SetupCatalog(mgr ctrl.Manager, o controller.Options, os OpenStack) error {
	name := "providerconfig/" + openstackv1alpha1.SchemeGroupVersion.Group + "/catalog"
	r := &CatalogReader{OpenStack: os, Log: o.Logger.WithValues("controller", name),
		Record: event.NewAPIRecorder(mgr.GetEventRecorderFor(name)), Poll: o.PollInterval}
	return ctrl.NewControllerManagedBy(mgr).
		Named(name).
		WithOptions(o.ForControllerRuntime()).
		For(&openstackv1alpha1.ProviderConfig{}, builder.WithPredicates(NotOnlyStatus())).
		Complete(ratelimiter.NewReconciler(name, r, o.GlobalRateLimiter))
}

// Reconcile reads the catalog and records it when it changed.
func (r *CatalogReader) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	pc := &openstackv1alpha1.ProviderConfig{}
	if err := r.OpenStack.Kube.Get(ctx, req.NamespacedName, pc); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if pc.GetDeletionTimestamp() != nil {
		return reconcile.Result{}, nil
	}
	services, region, err := r.read(ctx, pc)
	want := pc.DeepCopy()
	if err != nil {
		// What was read before stays: a cloud that is briefly unreachable
		// does not lose its services.
		want.SetConditions(xpv2.Condition{Type: openstackv1alpha1.ConditionCatalogRead, Status: corev1.ConditionFalse,
			Reason: reasonCatalogFailing, Message: err.Error(), LastTransitionTime: metav1.Now()})
	} else {
		want.Status.Catalog = &openstackv1alpha1.Catalog{Region: region, Services: services}
		want.SetConditions(xpv2.Condition{Type: openstackv1alpha1.ConditionCatalogRead, Status: corev1.ConditionTrue,
			Reason: reasonCatalogRead, LastTransitionTime: metav1.Now()})
	}
	// Credentials Keystone refuses are not tried again every poll: each try
	// costs Keystone a password check.
	after := r.Poll
	if openstack.IsTerminal(err) {
		after = terminalBackoff * r.Poll
	}
	if !changed(pc, want) {
		return reconcile.Result{RequeueAfter: after}, nil
	}
	// An event when the reading starts to fail or fails differently, not on
	// every poll.
	if err != nil {
		r.Record.Event(pc, event.Warning("CatalogReadFailed", err))
	}
	if uerr := r.write(ctx, pc, want); uerr != nil {
		return reconcile.Result{}, uerr
	}
	if err == nil {
		r.Log.Info("read the service catalog", "providerconfig", pc.Name, "region", region, "services", services)
	}
	return reconcile.Result{RequeueAfter: after}, nil
}

func (r *CatalogReader) read(ctx context.Context, pc *openstackv1alpha1.ProviderConfig) ([]string, string, error) {
	cfg, err := r.OpenStack.Config(ctx, pc)
	if err != nil {
		return nil, "", err
	}
	s, err := r.OpenStack.Open(ctx, cfg)
	if err != nil {
		return nil, "", err
	}
	services, err := s.Catalog()
	return services, s.Region(), err
}

// write patches the ProviderConfig's status from the cache's copy was to
// want: the catalog and the conditions, as a JSON merge patch, which
// carries no version. An update carried the version read from the cache
// and was refused whenever the users' count or a finalizer had changed the
// ProviderConfig since (2,825 refused while two shards converged 1,000
// clouds; docs/benchmarks.md), and read again, refused again, until the
// cache caught up. The patch names only what differs from was, so it
// cannot undo the users' count; the conditions are one list and written
// whole, which could undo only crossplane-runtime's Terminating condition,
// which it writes to a ProviderConfig being deleted, which this reader
// leaves alone.
func (r *CatalogReader) write(ctx context.Context, was, want *openstackv1alpha1.ProviderConfig) error {
	return r.OpenStack.Kube.Status().Patch(ctx, want, client.MergeFrom(was))
}

// changed reports whether the catalog or the condition's status, reason
// or message differ (the transition time alone is no change).
func changed(was, want *openstackv1alpha1.ProviderConfig) bool {
	a, b := was.GetCondition(openstackv1alpha1.ConditionCatalogRead), want.GetCondition(openstackv1alpha1.ConditionCatalogRead)
	if !a.Equal(b) {
		return true
	}
	switch {
	case was.Status.Catalog == nil || want.Status.Catalog == nil:
		return was.Status.Catalog != want.Status.Catalog
	default:
		return was.Status.Catalog.Region != want.Status.Catalog.Region || !slices.Equal(was.Status.Catalog.Services, want.Status.Catalog.Services)
	}
}
