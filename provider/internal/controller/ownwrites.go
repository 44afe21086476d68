package controller

import (
	"context"
	"reflect"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// ownWriteAwaited is how long, at most, a read waits for the manager's
// cache to hold what this reconciler last wrote of the object, before it
// reads the object from the API server instead. The cache follows the API
// server's watch, a fraction of a second behind while it has room; while a
// landscape converges beside a busy API server it can be many seconds
// behind (two shards converging 1,000 clouds on two cores: no read that
// waited 3 s saw the cache catch up, docs/benchmarks.md). Yet the wait
// paces a reconciler's requests to that API server: at 0.1 s, two shards
// converged 500 clouds no sooner and read the API server more (stop 86).
const ownWriteAwaited = time.Second

// ownWriteRemembered is how long a write is remembered while the cache
// does not hold it: a read within it that finds the cache older reads the
// API server. Past it, the object is read from the cache as it is (a
// write that was never followed by a watch event, as one of an object
// deleted meanwhile, is not waited for forever).
const ownWriteRemembered = time.Minute

// ownWriteWaits is how the managed reconcilers' reads of what they had just
// written went, when the cache did not hold that write at once: held, the
// cache caught up within ownWriteAwaited; read_live, it did not and the
// object was read from the API server. How often and how long says how far
// the cache lags the API server (docs/operations.md).
var ownWriteWaits = prometheus.NewHistogramVec(prometheus.HistogramOpts{
	Name:    "cobaltcore_provider_cache_own_write_wait_seconds",
	Help:    "Reads by a managed reconciler of an object it had written that the cache did not yet hold: outcome held, the cache caught up while the read waited; read_live, it did not and the object was read from the API server. Reads that found the write in the cache at once are not counted.",
	Buckets: []float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2},
}, []string{"outcome"})

func init() { metrics.Registry.MustRegister(ownWriteWaits) }

// awaitingOwnWrites is a client whose reads of an object this reconciler
// wrote return that write or a newer version: from the cache once it holds
// it, within a short wait, or else from the API server. crossplane-runtime's
// managed reconciler ends most reconciles with a status update, is run
// again soon after (at once after a create, while an external object is
// not yet ready), and reads the object from the cache when it runs: a cache
// that had not yet seen the write gave it the older version, it called the
// cloud, and its writes then failed on the conflict, for another try after
// a backoff. Two shards converging 1,000 clouds had 35,000 of their
// managed resources' writes refused that way (docs/benchmarks.md). One read
// of the API server costs less than a refused write, the reconcile's cloud
// calls and the backoff.
type awaitingOwnWrites struct {
	client.Client
	// live reads the API server (the manager's API reader), when the
	// cache does not hold this reconciler's last write within await.
	live   client.Reader
	writes *ownWrites
	await  time.Duration
}

// ownWrites remembers, per object, the version a reconciler's clients last
// wrote, until the cache holds it. One per reconciler: every client it
// takes from its manager (its own, its finalizer's, its annotation
// updater's) writes the same objects.
type ownWrites struct {
	mu      sync.Mutex
	written map[ownKey]ownWrite
	// prune is the size past which written is swept of what is past
	// ownWriteRemembered: double what the last sweep kept, so that
	// sweeping costs a constant per write.
	prune int
}

type ownKey struct {
	kind reflect.Type
	key  client.ObjectKey
}

type ownWrite struct {
	version string
	at      time.Time
}

func newOwnWrites() *ownWrites { return &ownWrites{written: map[ownKey]ownWrite{}, prune: 1024} }

// keyOf is obj's key, and false for an object whose Go type does not name
// its kind (unstructured): the managed reconcilers read typed objects.
func keyOf(obj client.Object, key client.ObjectKey) (ownKey, bool) {
	if _, u := obj.(*unstructured.Unstructured); u {
		return ownKey{}, false
	}
	return ownKey{kind: reflect.TypeOf(obj), key: key}, true
}

// wrote remembers obj's version, as the API server answered a write.
func (w *ownWrites) wrote(obj client.Object) {
	k, ok := keyOf(obj, client.ObjectKeyFromObject(obj))
	if !ok || obj.GetResourceVersion() == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	now := time.Now()
	// What is never read again (an object deleted meanwhile) goes once
	// the map grows: no read would wait for it any more.
	if len(w.written) >= w.prune {
		for k, o := range w.written {
			if now.Sub(o.at) > ownWriteRemembered {
				delete(w.written, k)
			}
		}
		w.prune = max(1024, 2*len(w.written))
	}
	w.written[k] = ownWrite{version: obj.GetResourceVersion(), at: now}
}

// held reports whether version (read from the cache) holds the last write
// of k, forgetting that write once it does; a version that cannot be
// compared counts as held, as does any version once the write is older than
// ownWriteRemembered.
func (w *ownWrites) held(k ownKey, version string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	o, ok := w.written[k]
	if !ok {
		return true
	}
	if c, err := resourceversion.CompareResourceVersion(version, o.version); err == nil && c < 0 && time.Since(o.at) < ownWriteRemembered {
		return false
	}
	delete(w.written, k)
	return true
}

func (w *ownWrites) forget(k ownKey) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.written, k)
}

// Get reads obj from the cache, again until it holds this reconciler's
// last write of it, and from the API server once the wait is over.
func (c awaitingOwnWrites) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	k, tracked := keyOf(obj, key)
	start := time.Now()
	deadline := start.Add(c.await)
	for pause, waited := 10*time.Millisecond, false; ; pause, waited = min(2*pause, 200*time.Millisecond), true {
		err := c.Client.Get(ctx, key, obj, opts...)
		if !tracked {
			return err
		}
		if kerrors.IsNotFound(err) {
			c.writes.forget(k)
		}
		if err != nil {
			return err
		}
		if c.writes.held(k, obj.GetResourceVersion()) {
			if waited {
				ownWriteWaits.WithLabelValues("held").Observe(time.Since(start).Seconds())
			}
			return nil
		}
		if !time.Now().Add(pause).Before(deadline) || ctx.Err() != nil {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(pause):
		}
	}
	c.writes.forget(k)
	if c.live == nil {
		return nil
	}
	ownWriteWaits.WithLabelValues("read_live").Observe(time.Since(start).Seconds())
	return c.live.Get(ctx, key, obj, opts...)
}

func (c awaitingOwnWrites) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	return c.remember(obj, c.Client.Create(ctx, obj, opts...))
}

func (c awaitingOwnWrites) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	return c.remember(obj, c.Client.Update(ctx, obj, opts...))
}

func (c awaitingOwnWrites) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	return c.remember(obj, c.Client.Patch(ctx, obj, patch, opts...))
}

func (c awaitingOwnWrites) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	if k, ok := keyOf(obj, client.ObjectKeyFromObject(obj)); ok {
		c.writes.forget(k)
	}
	return c.Client.Delete(ctx, obj, opts...)
}

func (c awaitingOwnWrites) Status() client.SubResourceWriter {
	return ownStatusWrites{SubResourceWriter: c.Client.Status(), c: c}
}

func (c awaitingOwnWrites) remember(obj client.Object, err error) error {
	if err == nil {
		c.writes.wrote(obj)
	}
	return err
}

type ownStatusWrites struct {
	client.SubResourceWriter
	c awaitingOwnWrites
}

func (w ownStatusWrites) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	return w.c.remember(obj, w.SubResourceWriter.Update(ctx, obj, opts...))
}

func (w ownStatusWrites) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	return w.c.remember(obj, w.SubResourceWriter.Patch(ctx, obj, patch, opts...))
}
