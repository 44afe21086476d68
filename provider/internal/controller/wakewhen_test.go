package controller

import (
	"context"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	keystonev1alpha1 "github.com/c5c3/consumer-plane/apis/keystone/v1alpha1"
)

// TestWakeWhen: a reconcile that calls WakeWhen has its resource (by name)
// sent to the controller's wake source once ready is closed, not before;
// WakeWhen outside a wakeable reconcile does nothing.
func TestWakeWhen(t *testing.T) {
	ready := make(chan struct{})
	w := newWakeable(reconcile.Func(func(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
		WakeWhen(ctx, ready)
		return reconcile.Result{Requeue: true}, nil
	}), func() client.Object { return &keystonev1alpha1.Project{} })

	if _, err := w.Reconcile(t.Context(), reconcile.Request{NamespacedName: client.ObjectKey{Name: "team-a-prod"}}); err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-w.events:
		t.Fatalf("woke %s before ready was closed", e.Object.GetName())
	case <-time.After(100 * time.Millisecond):
	}
	close(ready)
	var e event.GenericEvent
	select {
	case e = <-w.events:
	case <-time.After(10 * time.Second):
		t.Fatal("no wake after ready was closed")
	}
	if _, ok := e.Object.(*keystonev1alpha1.Project); !ok || e.Object.GetName() != "team-a-prod" {
		t.Errorf("woke %T %q, want the Project team-a-prod", e.Object, e.Object.GetName())
	}

	// A context no wakeable made: nothing to wake, nothing to panic on.
	closed := make(chan struct{})
	close(closed)
	WakeWhen(t.Context(), closed)
	WakeWhen(context.WithValue(t.Context(), wakerKey{}, waker{events: w.events, newObject: func() client.Object { return &keystonev1alpha1.Project{} }}), nil)
	select {
	case e := <-w.events:
		t.Fatalf("woke %q without a wakeable reconcile or a ready channel", e.Object.GetName())
	case <-time.After(100 * time.Millisecond):
	}
}
