package controller

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/c5c3/consumer-plane/provider/internal/clients/openstack"
)

// MayAdopt reports whether Observe may take over an object found by its
// name rather than its ID: when this resource's own create was interrupted
// (crossplane recorded "create pending" and never "create succeeded", so the
// object is most likely the one it made), or when the resource only observes
// (importing an existing object by name). Otherwise an object of the same
// name belongs to someone else, and Create reports the clash.
func MayAdopt(mg resource.Managed) bool {
	if meta.ExternalCreateIncomplete(mg) {
		return true
	}
	p := mg.GetManagementPolicies()
	return len(p) > 0 && !slices.Contains(p, xpv2.ManagementActionAll) && !slices.Contains(p, xpv2.ManagementActionCreate)
}

// A Finder reaches one kind of OpenStack object by ID and by its unique name.
type Finder[T any] struct {
	// Get returns the object with an ID; an error IsNotFound recognises
	// when there is none.
	Get func(ctx context.Context, id string) (*T, error)
	// FindByName returns the object with the resource's name, or nil.
	FindByName func(ctx context.Context) (*T, error)
	// ID of an object, the resource's external name.
	ID func(*T) string
	// Created, when set, keeps what Create returned for the Observe that
	// follows it.
	Created *Created[T]
}

// createdFor bounds how long a created object waits for its confirming
// Observe (crossplane requeues it about a second after the create).
const createdFor = time.Minute

// Created remembers the objects a kind's Create returned until the next
// Observe of each. Crossplane's managed reconciler observes every resource
// again right after creating it, to confirm the create; the object the
// service answered the create with is that confirmation, so the GET is
// saved (one call in three of a Keystone project's life until its first
// poll; #24 §5). An object is taken once: every later Observe asks the
// service. The zero value is ready to use.
//
// Objects are kept by the managed resource (its UID) and the external ID:
// IDs are unique only within one cloud (Nova numbers its aggregates), and
// one controller serves every cloud.
type Created[T any] struct {
	mu      sync.Mutex
	objects map[createdKey]created[T]
}

type createdKey struct {
	resource types.UID
	id       string
}

type created[T any] struct {
	obj *T
	at  time.Time
}

func (c *Created[T]) put(mg resource.Managed, id string, obj *T) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	if c.objects == nil {
		c.objects = map[createdKey]created[T]{}
	}
	for k, e := range c.objects {
		if now.Sub(e.at) > createdFor {
			delete(c.objects, k)
		}
	}
	c.objects[createdKey{mg.GetUID(), id}] = created[T]{obj: obj, at: now}
}

func (c *Created[T]) take(mg resource.Managed, id string) *T {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := createdKey{mg.GetUID(), id}
	e, ok := c.objects[k]
	delete(c.objects, k)
	if !ok || time.Since(e.at) > createdFor {
		return nil
	}
	return e.obj
}

// Lookup returns the external object of mg, or nil when it does not exist:
// by external name when one is recorded, else by name when MayAdopt. An
// adopted object's ID becomes the external name, and adopted is true: the
// caller reports ResourceLateInitialized so the reconciler persists it.
func (f Finder[T]) Lookup(ctx context.Context, mg resource.Managed) (obj *T, adopted bool, err error) {
	if id := meta.GetExternalName(mg); id != "" {
		if f.Created != nil {
			if obj := f.Created.take(mg, id); obj != nil {
				return obj, false, nil
			}
		}
		obj, err := f.Get(ctx, id)
		if openstack.IsNotFound(err) {
			return nil, false, nil
		}
		return obj, false, err
	}
	if !MayAdopt(mg) {
		return nil, false, nil
	}
	obj, err = f.FindByName(ctx)
	if err != nil || obj == nil {
		return nil, false, err
	}
	meta.SetExternalName(mg, f.ID(obj))
	return obj, true, nil
}

// recoverTimeout bounds the lookup of an object whose create lost its answer.
const recoverTimeout = 30 * time.Second

// Create calls create and settles an outcome that may be unknown: when its error says
// the request may have reached the service but its answer never arrived (the
// reconcile's deadline passed under load, the connection dropped), the object
// is looked up by its name — with a context of its own, as the reconcile's
// may have expired — and taken as created when it exists. Otherwise
// crossplane would record the create as failed, and the next one would find
// the name taken by "someone else" and stop for good.
func (f Finder[T]) Create(ctx context.Context, mg resource.Managed, create func(context.Context) (*T, error)) (obj *T, err error) {
	defer func() {
		if err == nil && obj != nil && f.Created != nil {
			f.Created.put(mg, f.ID(obj), obj)
		}
	}()
	obj, err = create(ctx)
	if err == nil || !openstack.OutcomeUnknown(err) {
		return obj, err
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recoverTimeout)
	defer cancel()
	if found, ferr := f.FindByName(rctx); ferr == nil && found != nil {
		return found, nil
	}
	return nil, err
}

// DeletionDone reports, for a resource whose external state cannot vanish
// (a project's quota set always exists; an issued kubeconfig cannot be
// revoked), that its Delete already succeeded: crossplane's reconciler marks
// Ready=False/Deleting with Synced=True only after Delete returned no error
// (a failed Delete leaves Synced=False and is retried). Observe then reports
// the resource gone so the finalizer comes off.
func DeletionDone(mg resource.Managed) bool {
	if !meta.WasDeleted(mg) {
		return false
	}
	ready, synced := mg.GetCondition(xpv2.TypeReady), mg.GetCondition(xpv2.TypeSynced)
	return ready.Reason == xpv2.ReasonDeleting && synced.Status == corev1.ConditionTrue && synced.Reason == xpv2.ReasonReconcileSuccess
}

// ConfirmGone lets a resource whose Delete succeeded (DeletionDone) and
// whose object is gone be finalized on this pass. crossplane-runtime's
// managed reconciler trusts that an object does not exist only once a
// creation grace period has passed (30 s after the create), for services
// whose reads lag their writes, and it does so during a deletion too: a
// resource deleted a few seconds after its create kept its finalizer until
// 30 s after the create (a Keystone user: 31 s on an idle machine, more
// than a minute once in CI; a Ceph pool or client, an OVN row the same). After a Delete that succeeded, an object not found is the
// deletion confirmed, not a read lagging a create: the record of the
// create is dropped from the resource in memory (it is on its way out).
// Before that, nothing changes: a resource whose first look while being
// deleted finds nothing still waits out the grace period, in case its
// object was created a moment before. providerconfig.Connector calls it
// whenever an Observe finds nothing; a kind with a connector of its own
// calls it itself.
func ConfirmGone(mg resource.Managed) {
	if !DeletionDone(mg) {
		return
	}
	a := mg.GetAnnotations()
	delete(a, meta.AnnotationKeyExternalCreateSucceeded)
	mg.SetAnnotations(a)
}

// NameTaken is the terminal error of a create that found the unique name
// taken by an object this resource did not create (and so, by MayAdopt's
// rule, will not take over). what names the object: `a Nova aggregate
// named "x"`.
func NameTaken(what string) error {
	return openstack.Terminal(fmt.Errorf("%s already exists and was not created by this resource: "+
		"set the crossplane.io/external-name annotation to its ID to manage it, or use managementPolicies [\"Observe\"] to import it", what))
}
