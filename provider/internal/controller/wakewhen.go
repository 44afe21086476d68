package controller

import (
	"context"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// WakeWhen has the resource being reconciled with ctx reconciled again as
// soon as ready is closed, besides the retry its failed reconcile schedules.
// A connector calls it when it fails on something that ends on its own, at
// a moment it is told of: another reconcile authenticating with the same
// credential (a cache.BusyError's Done). The retry alone waits the
// controller's per-item backoff (1, 2, 4 ... 60 s), which grows with every
// failure: a new cloud's resources all start at once, one authenticates
// against a Keystone that takes seconds, and the rest waited up to twice
// as long again as each failed try before (stop 72: a cloud's Project
// created 22 s after its managed resource).
//
// A ctx that no managed controller of this package made (a test's, a
// ProviderConfig reconciler's) wakes nothing.
func WakeWhen(ctx context.Context, ready <-chan struct{}) {
	w, ok := ctx.Value(wakerKey{}).(waker)
	if !ok || ready == nil {
		return
	}
	go func() {
		t := time.NewTimer(wakeWithin)
		defer t.Stop()
		select {
		case <-ready:
			w.wake()
		case <-t.C:
			// The build hangs past every timeout: the retry comes anyway.
		}
	}()
}

// wakeWithin bounds how long a woken resource's goroutine waits: longer
// than any authentication may take (the clients' 60-s timeout, retried).
const wakeWithin = 5 * time.Minute

type wakerKey struct{}

// A waker sends the reconciled resource's request to its controller's
// wake source.
type waker struct {
	events    chan<- event.GenericEvent
	newObject func() client.Object
	req       reconcile.Request
}

// wake sends the request, waiting in its goroutine when the buffer is full
// (hundreds woken at once) rather than dropping it. The object naming it is
// made here, not at every reconcile: few reconciles ever wake.
func (w waker) wake() {
	o := w.newObject()
	o.SetNamespace(w.req.Namespace)
	o.SetName(w.req.Name)
	w.events <- event.GenericEvent{Object: o}
}

// wakeable gives each reconcile's ctx the waker of its resource, and is the
// source the controller watches for the wakes.
type wakeable struct {
	reconcile.Reconciler
	events chan event.GenericEvent
	// newObject is an empty object of the controller's kind.
	newObject func() client.Object
}

func newWakeable(r reconcile.Reconciler, newObject func() client.Object) wakeable {
	return wakeable{Reconciler: r, events: make(chan event.GenericEvent, 1024), newObject: newObject}
}

func (w wakeable) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	return w.Reconciler.Reconcile(context.WithValue(ctx, wakerKey{}, waker{events: w.events, newObject: w.newObject, req: req}), req)
}

// Source is what the controller watches for its resources' wakes.
func (w wakeable) Source() source.Source {
	return source.Channel((<-chan event.GenericEvent)(w.events), &handler.EnqueueRequestForObject{})
}
