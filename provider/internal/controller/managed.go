// Package controller wires the provider's controllers into a manager.
package controller

import (
	"context"
	"fmt"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	xpevent "github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	"github.com/crossplane/crossplane-runtime/v2/pkg/statemetrics"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/c5c3/consumer-plane/internal/pace"
)

// SetupManaged adds the managed reconciler of one kind, with what every kind
// of this provider shares:
//
//   - no NameAsExternalName initializer: the external name is the ID the
//     cloud assigns, recorded by Create, never the object's name;
//   - deterministic external names: before creating, every connector looks
//     for an object its interrupted create may have made (by its unique name)
//     and adopts it, so a crash between create and recording the ID is safe
//     to retry instead of stalling on crossplane's "create pending" guard;
//   - management policies (Observe-only import), events, Prometheus metrics;
//   - a resource not yet Ready is observed again soon (PollWhileWaiting).
//
// connect is the kind's managed.WithTypedExternalConnector.
func SetupManaged(mgr ctrl.Manager, o controller.Options, gvk schema.GroupVersionKind, list resource.ManagedList, connect managed.ReconcilerOption, extra ...managed.ReconcilerOption) error {
	return SetupManagedWatching(mgr, o, gvk, list, nil, connect, extra...)
}

// SetupManagedWatching is SetupManaged for a kind whose external state can
// be watched: src (when not nil) requests reconciles of the managed
// resources whose external objects changed, besides the periodic poll.
func SetupManagedWatching(mgr ctrl.Manager, o controller.Options, gvk schema.GroupVersionKind, list resource.ManagedList, src source.Source, connect managed.ReconcilerOption, extra ...managed.ReconcilerOption) error {
	var srcs []source.Source
	if src != nil {
		srcs = append(srcs, src)
	}
	return setupManaged(mgr, o, gvk, list, srcs, nil, connect, extra...)
}

// SetupManagedReferencing is SetupManaged for a Referencing kind: a
// resource is reconciled as soon as one it references, of a kind in wakes,
// is created or changes readiness, instead of at its next retry (see
// wakeSources).
func SetupManagedReferencing(mgr ctrl.Manager, o controller.Options, gvk schema.GroupVersionKind, list resource.ManagedList, wakes []Wake, connect managed.ReconcilerOption, extra ...managed.ReconcilerOption) error {
	return setupManaged(mgr, o, gvk, list, nil, wakes, connect, extra...)
}

func setupManaged(mgr ctrl.Manager, o controller.Options, gvk schema.GroupVersionKind, list resource.ManagedList, srcs []source.Source, wakes []Wake, connect managed.ReconcilerOption, extra ...managed.ReconcilerOption) error {
	name := managed.ControllerName(gvk.GroupKind().String())
	copts := o.ForControllerRuntime()
	limiter := ratelimiter.NewController()
	copts.RateLimiter = limiter
	turns := newTurnTaker(name, o.GlobalRateLimiter)
	hook := PollWhileWaiting(time.Now)
	if turns != nil {
		copts.NewQueue = turns.newQueue(mgr.GetLogger())
		hook = turns.pollHook(hook)
	}
	opts := append([]managed.ReconcilerOption{
		connect,
		managed.WithInitializers(),
		managed.WithDeterministicExternalName(true),
		managed.WithManagementPolicies(),
		managed.WithLogger(o.Logger.WithValues("controller", name)),
		managed.WithPollInterval(o.PollInterval),
		managed.WithPollIntervalHook(hook),
		managed.WithRecorder(progressRecorder{Recorder: xpevent.NewAPIRecorder(mgr.GetEventRecorderFor(name)), limiter: limiter}),
	}, extra...)
	if o.MetricOptions != nil {
		opts = append(opts, managed.WithMetricRecorder(o.MetricOptions.MRMetrics))
		if o.MetricOptions.MRStateMetrics != nil {
			sr := statemetrics.NewMRStateRecorder(uncopiedLists{mgr.GetClient()}, o.Logger, o.MetricOptions.MRStateMetrics, list, o.MetricOptions.PollStateMetricInterval)
			if err := mgr.Add(sr); err != nil {
				return err
			}
		}
	}
	obj, err := mgr.GetScheme().New(gvk)
	if err != nil {
		return err
	}
	mg, ok := obj.(resource.Managed)
	if !ok {
		return errNotManaged(gvk)
	}
	if err := resolvesWithWakes(mg, wakes); err != nil {
		return fmt.Errorf("%s: %w", gvk.Kind, err)
	}
	if len(wakes) > 0 {
		ws, err := wakeSources(mgr, mg.(Referencing), list, wakes) //nolint:forcetypeassert // resolvesWithWakes checked it
		if err != nil {
			return err
		}
		srcs = append(srcs, ws...)
		opts = append(opts, managed.WithReferenceResolver(referenceResolver{client: mgr.GetClient()}))
	}
	var r reconcile.Reconciler = managed.NewReconciler(newManagedClients(mgr), resource.ManagedKind(gvk), opts...)
	if turns != nil {
		turns.inner = r
		r = turns
	} else {
		r = ratelimiter.NewReconciler(name, r, o.GlobalRateLimiter)
	}
	w := newWakeable(r, func() client.Object { return newOf(mg) })
	b := ctrl.NewControllerManagedBy(mgr).
		Named(name).
		WithOptions(copts).
		For(mg, builder.WithPredicates(DesiredStateChanged())).
		WatchesRawSource(w.Source())
	for _, src := range srcs {
		b = b.WatchesRawSource(src)
	}
	return b.Complete(w)
}

// DesiredStateChanged is crossplane-runtime's predicate of the same name,
// which also passes the update in which the managed reconciler records a
// successful create (the external-create-succeeded annotation, with the
// external name Create assigned). That reconciler asks for its own requeue
// after every create, so the event only made a second observe of a resource
// created a moment before: one reconcile of three per created resource, all
// under the same reconcile rate limit (#24 §5). Nobody but the reconciler
// writes that annotation, so an update changing it is always its own.
func DesiredStateChanged() predicate.Predicate {
	return predicate.And(
		resource.DesiredStateChanged(),
		predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
			if e.ObjectOld == nil || e.ObjectNew == nil {
				return true
			}
			return e.ObjectOld.GetAnnotations()[meta.AnnotationKeyExternalCreateSucceeded] ==
				e.ObjectNew.GetAnnotations()[meta.AnnotationKeyExternalCreateSucceeded]
		}},
	)
}

// PollWhileWaiting paces the next observe of a managed resource that is not
// Ready (internal/pace): a few seconds after its conditions last changed,
// less often the longer nothing changes, at most the poll interval, which a
// Ready resource keeps. What such a resource waits on (a Shoot Gardener
// reconciles, a kubeconfig it issues, a server the metal-operator frees, a
// Ceph cluster the arbiter joins) changes outside the management cluster, so
// no watch wakes it: polled once a minute, every stage of a pool or cloud
// behind it waited up to a minute. A landscape's thousands of Ready
// resources are polled as before.
func PollWhileWaiting(now func() time.Time) managed.PollIntervalHook {
	return func(mg resource.Managed, poll time.Duration) time.Duration {
		ready := mg.GetCondition(xpv2.TypeReady)
		if ready.Status == corev1.ConditionTrue {
			return poll
		}
		synced := mg.GetCondition(xpv2.TypeSynced)
		last := pace.LastChange(mg.GetCreationTimestamp().Time, ready.LastTransitionTime.Time, synced.LastTransitionTime.Time)
		return pace.Next(now().Sub(last), poll)
	}
}

// The reasons crossplane-runtime's managed reconciler records a create and
// a delete of the external resource with (unexported there; a test checks
// them against the module's source).
const (
	reasonCreated xpevent.Reason = "CreatedExternalResource"
	reasonDeleted xpevent.Reason = "DeletedExternalResource"
)

// progressRecorder forgets a resource's retry backoff when the managed
// reconciler records that it created or deleted the external resource.
// The reconciler then asks to be called again at once (Requeue), which
// controller-runtime delays by the resource's backoff; that counts every
// failure before, each wait on a reference among them, so a resource
// created after waiting on its references was looked at again 30 s or
// more after its create, and was Ready that much late (a cloud's
// application credential: created 32 s after its grant, Ready 33 s after
// that). Forgotten, the next look comes after the base delay, a second.
type progressRecorder struct {
	xpevent.Recorder
	limiter workqueue.TypedRateLimiter[reconcile.Request]
}

// Event records e, and forgets obj's backoff after a create or delete.
func (r progressRecorder) Event(obj runtime.Object, e xpevent.Event) {
	r.Recorder.Event(obj, e)
	if e.Reason != reasonCreated && e.Reason != reasonDeleted {
		return
	}
	if m, err := apimeta.Accessor(obj); err == nil {
		r.limiter.Forget(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: m.GetNamespace(), Name: m.GetName()}})
	}
}

// WithAnnotations keeps forgetting with the annotated recorder.
func (r progressRecorder) WithAnnotations(keysAndValues ...string) xpevent.Recorder {
	return progressRecorder{Recorder: r.Recorder.WithAnnotations(keysAndValues...), limiter: r.limiter}
}

type errNotManaged schema.GroupVersionKind

func (e errNotManaged) Error() string {
	return schema.GroupVersionKind(e).String() + " is not a managed resource"
}

// uncopiedLists lists from the cache without copying each object: the
// state metrics' recorder lists every managed resource of its kind every
// PollStateMetricInterval only to count their conditions. With copies, at
// 5,000 clouds (50,000 resources, every 5 s) those lists were a quarter of
// the provider's heap profile (docs/benchmarks.md). Only for readers that
// never change what they list.
type uncopiedLists struct{ client.Client }

func (c uncopiedLists) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return c.Client.List(ctx, list, append(opts, client.UnsafeDisableDeepCopy)...)
}
