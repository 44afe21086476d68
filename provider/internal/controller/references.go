package controller

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// A Referencing managed resource resolves fields from other managed
// resources it names (a QuotaSet's project ID from its Project): Referenced
// lists them, beside its ResolveReferences.
type Referencing interface {
	resource.Managed
	Referenced() []xpv2.TypedReference
}

// A Wake is a kind of managed resource whose changes can unblock the
// resources that reference it.
type Wake struct {
	// Object is an empty object of the kind.
	Object client.Object
	// Unblocks names what a change of o can unblock, as the referencing
	// resources name it; nil is o itself. A grant names its user: an
	// application credential naming that user waits for the grant too
	// (Keystone refuses a credential with a role its user lacks).
	Unblocks func(o client.Object) []xpv2.TypedReference
}

// referenceResolver is the managed reconciler's reference resolver for the
// Referencing kinds: it resolves a resource's references (its
// ResolveReferences) and writes what changed as a JSON merge patch.
//
// crossplane-runtime's own resolver (APISimpleReferenceResolver) applies
// only the fields that changed, server-side and as one field manager: an
// apply removes the fields that manager applied before and leaves out now.
// That is harmless while a resolved ID is never resolved again, but this
// provider resolves references by name at every reconcile (see
// keystonev1alpha1's followsReferences): a RoleAssignment whose project ID
// changed lost its user ID in the same write, whose resolution then lost the
// project ID, and so on at every reconcile. A merge patch changes what it
// names and nothing else.
type referenceResolver struct {
	client client.Client
}

func (r referenceResolver) ResolveReferences(ctx context.Context, mg resource.Managed) error {
	rr, ok := mg.(interface {
		ResolveReferences(context.Context, client.Reader) error
	})
	if !ok {
		return nil
	}
	existing, ok := mg.DeepCopyObject().(client.Object)
	if !ok {
		return fmt.Errorf("cannot copy %T", mg)
	}
	if err := rr.ResolveReferences(ctx, r.client); err != nil {
		return fmt.Errorf("cannot resolve references: %w", err)
	}
	if cmp.Equal(existing, mg, cmpopts.EquateEmpty()) {
		return nil
	}
	if err := r.client.Patch(ctx, mg, client.MergeFrom(existing)); err != nil {
		return fmt.Errorf("cannot write the resolved references: %w", err)
	}
	return nil
}

var _ managed.ReferenceResolver = referenceResolver{}

// resolvesWithWakes refuses a kind that resolves references but is woken by
// none of their kinds, or is given wakes but names nothing it references:
// either would leave its resources to the retry backoff unseen.
func resolvesWithWakes(mg resource.Managed, wakes []Wake) error {
	// As crossplane-runtime's reconciler finds a kind's resolver.
	_, resolves := mg.(interface {
		ResolveReferences(context.Context, client.Reader) error
	})
	_, lists := mg.(Referencing)
	switch {
	case resolves && len(wakes) == 0:
		return errors.New("it resolves references: set it up with SetupManagedReferencing and the kinds it references")
	case len(wakes) > 0 && !lists:
		return errors.New("it is given kinds to wake it but lists no references (Referenced)")
	}
	return nil
}

// indexReferenced indexes the resources of a Referencing kind by what they
// reference (referenceKey).
const indexReferenced = "c5c3.io/referenced"

// referenceKey is a reference as the index keeps it: group, kind and name
// (the version does not make another object).
func referenceKey(r xpv2.TypedReference) string {
	gv, _ := schema.ParseGroupVersion(r.APIVersion) //nolint:errcheck // an unparsable version keys as the empty group, which no Wake sends
	return schema.GroupKind{Group: gv.Group, Kind: r.Kind}.String() + "/" + r.Name
}

// wakeSources are the watches that reconcile a resource of the Referencing
// kind of obj as soon as a resource it references gets its external name
// (is created) or changes readiness, for each kind in wakes.
//
// Without them, a resource whose reference is not yet resolvable (its
// Project is being created) is retried with the controller's per-item
// backoff: 1, 2, 4, 8 ... 60 s. A cloud's objects form chains (quotas and
// its tenant's user wait on its project, the grant on the user, the
// credential on the grant), and every link waited for up to twice as long
// as the one before had taken. A resource that selects by labels
// (a *Selector field) names nothing until it is resolved and keeps the
// backoff.
func wakeSources(mgr ctrl.Manager, obj Referencing, list client.ObjectList, wakes []Wake) ([]source.Source, error) {
	if len(wakes) == 0 {
		return nil, nil
	}
	err := mgr.GetFieldIndexer().IndexField(context.Background(), obj, indexReferenced, func(o client.Object) []string {
		r, ok := o.(Referencing)
		if !ok {
			return nil
		}
		var keys []string
		for _, ref := range r.Referenced() {
			keys = append(keys, referenceKey(ref))
		}
		return keys
	})
	if err != nil {
		return nil, fmt.Errorf("cannot index %T by what it references: %w", obj, err)
	}
	referrers := func(ctx context.Context, refs []xpv2.TypedReference) []reconcile.Request {
		var reqs []reconcile.Request
		for _, ref := range refs {
			// A list of its own: the controller's list is also the one
			// crossplane-runtime's state metrics recorder lists into every
			// few seconds, and a deep copy of it raced with that List and
			// crashed the provider ("index out of range" in DeepCopyInto)
			// when 600 clouds' resources woke each other after a restart
			// (make bench-scale).
			l := newOf(list)
			if err := mgr.GetClient().List(ctx, l, client.MatchingFields{indexReferenced: referenceKey(ref)}); err != nil {
				// The referrer's own retry still comes.
				continue
			}
			_ = apimeta.EachListItem(l, func(o runtime.Object) error { //nolint:errcheck // the function returns none
				if m, err := apimeta.Accessor(o); err == nil {
					reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: m.GetNamespace(), Name: m.GetName()}})
				}
				return nil
			})
		}
		return reqs
	}
	srcs := make([]source.Source, 0, len(wakes))
	for _, w := range wakes {
		gvk, err := apiutil.GVKForObject(w.Object, mgr.GetScheme())
		if err != nil {
			return nil, err
		}
		unblocks := w.Unblocks
		if unblocks == nil {
			unblocks = func(o client.Object) []xpv2.TypedReference {
				return []xpv2.TypedReference{{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: o.GetName()}}
			}
		}
		srcs = append(srcs, source.Kind(mgr.GetCache(), w.Object,
			handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
				return referrers(ctx, unblocks(o))
			}),
			Unblocking()))
	}
	return srcs, nil
}

// newOf returns a new, empty object of v's type (v is a pointer, as every
// client.Object and client.ObjectList is).
func newOf[T any](v T) T {
	return reflect.New(reflect.TypeOf(v).Elem()).Interface().(T) //nolint:forcetypeassert // a pointer to v's own type
}

// Unblocking passes the updates of a managed resource that can unblock the
// resources referencing it: its external name set or changed (it was
// created), or its Ready condition's status changed. Its periodic
// observations change neither, so a landscape's thousands of Ready
// resources wake nobody. Creations are left out too: a new resource has
// no external name yet, and at the provider's start every resource is
// reconciled anyway.
func Unblocking() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			if e.ObjectOld == nil || e.ObjectNew == nil {
				return false
			}
			if meta.GetExternalName(e.ObjectOld) != meta.GetExternalName(e.ObjectNew) {
				return true
			}
			was, okWas := e.ObjectOld.(resource.Conditioned)
			is, okIs := e.ObjectNew.(resource.Conditioned)
			return okWas && okIs && was.GetCondition(xpv2.TypeReady).Status != is.GetCondition(xpv2.TypeReady).Status
		},
	}
}
