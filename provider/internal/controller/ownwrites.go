package controller

import (
	"context"
	"reflect"
	"sync"
	"time"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ownWriteAwaited is how long, at most, a read waits for the manager's
// cache to hold what this reconciler last wrote of the object. The cache
// follows the API server's watch, a fraction of a second behind while it
// has room, some seconds behind while a landscape converges on two cores.
const ownWriteAwaited = 3 * time.Second

// awaitingOwnWrites is a client whose reads of an object this reconciler
// wrote wait, briefly, until the cache they read from holds that write.
// crossplane-runtime's managed reconciler ends most reconciles with a
// status update and asks to be run again at once (after a create, while an
// external object is not yet ready), and reads the object from the cache
// when it runs: a cache that had not yet seen the write gave it the older
// version, it called the cloud, and its status update then failed on the
// conflict, for another try after a backoff. Two shards converging 1,000
// clouds had 12,000 of their status updates refused that way
// (docs/benchmarks.md). A read that waits instead calls the cloud once, with
// the version its write will be taken on.
type awaitingOwnWrites struct {
	client.Client
	writes *ownWrites
	// await bounds each read's wait (ownWriteAwaited); past it the read
	// returns what the cache holds, as it would without this client.
	await time.Duration
}

// ownWrites remembers, per object, the version a reconciler's clients last
// wrote, until the cache holds it. One per reconciler: every client it
// takes from its manager (its own, its finalizer's, its annotation
// updater's) writes the same objects.
type ownWrites struct {
	mu      sync.Mutex
	written map[ownKey]ownWrite
}

type ownKey struct {
	kind reflect.Type
	key  client.ObjectKey
}

type ownWrite struct {
	version string
	at      time.Time
}

func newOwnWrites() *ownWrites { return &ownWrites{written: map[ownKey]ownWrite{}} }

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
	if len(w.written) >= 1024 {
		for k, o := range w.written {
			if now.Sub(o.at) > ownWriteAwaited {
				delete(w.written, k)
			}
		}
	}
	w.written[k] = ownWrite{version: obj.GetResourceVersion(), at: now}
}

// held reports whether version (read from the cache) holds the last write
// of k, forgetting that write once it does; a version that cannot be
// compared, or a write older than ownWriteAwaited, counts as held.
func (w *ownWrites) held(k ownKey, version string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	o, ok := w.written[k]
	if !ok {
		return true
	}
	if c, err := resourceversion.CompareResourceVersion(version, o.version); err == nil && c < 0 && time.Since(o.at) < ownWriteAwaited {
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

// Get reads obj, again until it holds this reconciler's last write of it or
// the wait is over.
func (c awaitingOwnWrites) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	k, tracked := keyOf(obj, key)
	deadline := time.Now().Add(c.await)
	for pause := 10 * time.Millisecond; ; pause = min(2*pause, 200*time.Millisecond) {
		err := c.Client.Get(ctx, key, obj, opts...)
		if !tracked {
			return err
		}
		if kerrors.IsNotFound(err) {
			c.writes.forget(k)
		}
		if err != nil || c.writes.held(k, obj.GetResourceVersion()) {
			return err
		}
		if !time.Now().Add(pause).Before(deadline) {
			c.writes.forget(k)
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(pause):
		}
	}
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
