package providerconfig

import (
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	pcontroller "github.com/c5c3/consumer-plane/provider/internal/controller"
)

// UsersCountedEvery is how often, at most, a ProviderConfig's users are
// counted again while they change (see UsersChanged).
const UsersCountedEvery = time.Second

// UsersChanged enqueues the ProviderConfig a usage names, at most once per
// interval: every usage created or deleted within it is counted by one
// reconcile when it ends. A ProviderConfig gains hundreds of users at once
// when a landscape is applied, and crossplane-runtime's usage reconciler
// writes the ProviderConfig and its status on every reconcile: enqueued
// once per user, as crossplane-runtime's EnqueueRequestForProviderConfig
// does, that made more than 1,000 writes to one object while 500 resources
// converged, each a conflict waiting to happen with the others (#24 §5).
// Users are counted at most this much later; deletion stays blocked while
// any remain, since a ProviderConfig being deleted counts them again.
func UsersChanged(interval time.Duration) handler.EventHandler {
	add := func(o client.Object, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		if u, ok := o.(resource.LegacyProviderConfigUsage); ok {
			// The delaying queue keeps the earlier of two times for the
			// same request: a burst makes one reconcile.
			q.AddAfter(reconcile.Request{NamespacedName: types.NamespacedName{Name: u.GetProviderConfigReference().Name}}, interval)
		}
	}
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(e.Object, q)
		},
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(e.ObjectOld, q)
			add(e.ObjectNew, q)
		},
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(e.Object, q)
		},
		GenericFunc: func(_ context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(e.Object, q)
		},
	}
}

// NotOnlyStatus passes every event but an update that changed nothing
// but an object's status. The reconcilers of a ProviderConfig (usage
// counting, the credentials guard, the catalog reader) each write its
// status, and none reads another's: without it, each status write made
// all three reconcile again, to find nothing to do at the cost of two
// more writes by crossplane-runtime's usage reconciler, which updates the
// ProviderConfig and its status even when neither changes.
func NotOnlyStatus() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		if e.ObjectOld == nil || e.ObjectNew == nil {
			return true
		}
		o, n := e.ObjectOld, e.ObjectNew
		return o.GetGeneration() != n.GetGeneration() ||
			!equality.Semantic.DeepEqual(o.GetDeletionTimestamp(), n.GetDeletionTimestamp()) ||
			!slices.Equal(o.GetFinalizers(), n.GetFinalizers()) ||
			!equality.Semantic.DeepEqual(o.GetLabels(), n.GetLabels()) ||
			!equality.Semantic.DeepEqual(o.GetAnnotations(), n.GetAnnotations()) ||
			!equality.Semantic.DeepEqual(o.GetOwnerReferences(), n.GetOwnerReferences())
	}}
}

// usersIndex indexes a kind's usages by the ProviderConfig they name (the
// label crossplane-runtime's usage tracker gives them).
const usersIndex = "providerConfigUsers"

// IndexUsers indexes the usages of kind usage by the ProviderConfig they
// name, for counting one ProviderConfig's users (usersOf). Without it the
// cache answers a list by label by walking every usage of the kind, and
// allocating two slices as long as that, to return the few of one
// ProviderConfig: at 5,000 clouds, 50,000 usages walked per count, a count
// per ProviderConfig per second while its users change, and those slices
// were a tenth of the provider's heap (docs/benchmarks.md).
func IndexUsers(ctx context.Context, mgr ctrl.Manager, usage client.Object) error {
	return mgr.GetFieldIndexer().IndexField(ctx, usage, usersIndex, configOf)
}

// configOf is the ProviderConfig a usage is indexed under.
func configOf(usage client.Object) []string {
	if name := usage.GetLabels()[xpv2.LabelKeyProviderName]; name != "" {
		return []string{name}
	}
	return nil
}

// usersOf selects the usages of the ProviderConfig named name, through the
// index of IndexUsers.
func usersOf(name string) client.MatchingFields { return client.MatchingFields{usersIndex: name} }

// indexedUsers is a manager whose client counts a ProviderConfig's users
// through the index of IndexUsers, for crossplane-runtime's usage
// reconciler, which takes its client from the manager and lists a
// ProviderConfig's usages by label; and which sends no update of a
// ProviderConfig or its status that would change nothing, which that
// reconciler otherwise makes at every count.
type indexedUsers struct{ ctrl.Manager }

func (m indexedUsers) GetClient() client.Client {
	return m.client(m.Manager.GetClient(), m.Manager.GetAPIReader())
}

func (indexedUsers) client(c client.Client, live client.Reader) client.Client {
	return usersPatched{Client: pcontroller.UnchangedWritesSkipped(usersByIndex{c}), live: live}
}

// usageFinalizer is the finalizer crossplane-runtime's usage reconciler
// keeps on a ProviderConfig while it has users (its package's unexported
// "finalizer"; TestUsersCountedIntegration fails should it change).
const usageFinalizer = "in-use.crossplane.io"

// usersPatched writes the count of a ProviderConfig's users, all the status
// crossplane-runtime's usage reconciler sets while the ProviderConfig is not
// being deleted, as a patch of that one field, and not at all when the
// cache holds that count already. Its status update carried the version
// read from the cache, which lags the API server while a landscape
// converges: the update of a count the reconciler had just written failed
// on the conflict and was tried again after a backoff (6,106 conflicts
// while two shards converged 1,000 clouds, docs/benchmarks.md). The patch
// cannot undo another writer's status (the catalog reader's), and the
// reconciles of one ProviderConfig run one at a time, each counting from a
// cache at least as new as the one before, so the last count written is
// the newest.
type usersPatched struct {
	client.Client
	live client.Reader
}

// Update sends the one change crossplane-runtime's usage reconciler makes
// to a ProviderConfig, its finalizer added (or removed once the
// ProviderConfig is deleted and unused), as a patch of that finalizer
// (patchMetadata): its update carried the version read from the cache and
// was refused whenever the users' count or another writer's finalizer had
// changed the ProviderConfig since, and the reconciler then waited 30 s.
func (c usersPatched) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	if _, ok := obj.(resource.ProviderConfig); !ok || len(opts) > 0 {
		return c.Client.Update(ctx, obj, opts...)
	}
	keep := meta.FinalizerExists(obj, usageFinalizer)
	return patchMetadata(ctx, c.Client, c.live, obj, func(o client.Object) { setFinalizer(o, usageFinalizer, keep) })
}

func (c usersPatched) Status() client.SubResourceWriter {
	return usersPatch{SubResourceWriter: c.Client.Status(), reader: c.Client}
}

type usersPatch struct {
	client.SubResourceWriter
	reader client.Reader
}

func (w usersPatch) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	pc, ok := obj.(resource.ProviderConfig)
	if !ok || len(opts) > 0 || meta.WasDeleted(obj) {
		// Deleted, the reconciler also says why deletion waits: a
		// condition, written as it wrote it.
		return w.SubResourceWriter.Update(ctx, obj, opts...)
	}
	if held, ok := obj.DeepCopyObject().(resource.ProviderConfig); ok && w.reader.Get(ctx, client.ObjectKeyFromObject(obj), held) == nil &&
		held.GetUID() == obj.GetUID() && held.GetUsers() == pc.GetUsers() {
		return nil
	}
	// No users is no field, as the status' omitempty writes it.
	users := "null"
	if n := pc.GetUsers(); n != 0 {
		users = strconv.FormatInt(n, 10)
	}
	return w.Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte(`{"status":{"users":`+users+`}}`)))
}

// usersByIndex answers a list of usages by the ProviderConfig label from
// the index: the same usages, the label selector still applied to them.
type usersByIndex struct{ client.Client }

func (c usersByIndex) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if _, usages := list.(resource.ProviderConfigUsageList); !usages {
		return c.Client.List(ctx, list, opts...)
	}
	lo := &client.ListOptions{}
	lo.ApplyOptions(opts)
	if lo.FieldSelector != nil || lo.LabelSelector == nil {
		return c.Client.List(ctx, list, opts...)
	}
	name, ok := lo.LabelSelector.RequiresExactMatch(xpv2.LabelKeyProviderName)
	if !ok {
		return c.Client.List(ctx, list, opts...)
	}
	lo.FieldSelector = fields.OneTermEqualSelector(usersIndex, name)
	return c.Client.List(ctx, list, lo)
}
