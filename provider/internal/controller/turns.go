package controller

import (
	"context"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"
	"golang.org/x/time/rate"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// inTurns is crossplane-runtime's rate limit of a service's reconciles
// (ratelimiter.Reconciler), with the turns given in the order of the
// controller's queue, and routine polls behind every other request.
//
// crossplane-runtime's Reconciler reserves the limiter's next token for
// each request a worker takes, and requeues the request for that token's
// time when it lies ahead. Once a service's resources need more
// reconciles than its rate (past the sizing rule of docs/operations.md,
// or while a landscape catches up), the workers take every queued request
// at once, each reserving the next token: the reservations become the
// queue, in the order the requests were taken, and a new cloud's first
// reconcile waited behind every poll reserved before it (42 s at 1,000
// clouds, where the queue held a minute's polls). Here a worker waits for
// its token holding its request, so only the workers' requests hold
// tokens; the others stay in controller-runtime's priority queue, which
// hands the highest priority out first.
//
// The priority: a reconcile that ends in a routine poll (no error, the next
// look a poll interval away, as for a resource Ready and as it should be:
// PollWhileWaiting) is requeued at controller-runtime's low priority, every
// other outcome (an error, a create, a resource not Ready) at the normal
// one; a resource created or changed is queued at the normal priority by
// its watch. A backlog then delays the drift polls of the resources that
// converged, not the resources converging.
type inTurns struct {
	inner   reconcile.Reconciler
	limiter *rate.Limiter
	poll    time.Duration
}

// takeTurns limits r to l's rate, in the queue's order (inTurns), when l
// is a token bucket (ratelimiter.NewGlobal's); any other limiter is
// applied as crossplane-runtime applies it.
func takeTurns(name string, r reconcile.Reconciler, l ratelimiter.RateLimiter, poll time.Duration) reconcile.Reconciler {
	b, ok := l.(*workqueue.TypedBucketRateLimiter[string])
	if !ok || b.Limiter == nil {
		return ratelimiter.NewReconciler(name, r, l)
	}
	return inTurns{inner: r, limiter: b.Limiter, poll: poll}
}

// lowPriority is the priority of a routine poll: controller-runtime's, the
// one its watches give the objects of their first list.
var lowPriority = handler.LowPriority

func (t inTurns) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	if err := t.limiter.Wait(ctx); err != nil {
		// Only a cancelled context ends the wait (the limiter's burst is
		// ten tokens, a wait takes one): the manager is stopping.
		return reconcile.Result{}, err
	}
	res, err := t.inner.Reconcile(ctx, req)
	if t.routine(res, err) {
		res.Priority = &lowPriority
	} else {
		// Not the priority the request was taken with: a resource first
		// seen in the watch's initial list, at the low priority, that
		// needs work gets the normal one.
		normal := 0
		res.Priority = &normal
	}
	return res, err
}

// routine is whether a reconcile ended in a poll: nothing to do until the
// poll interval has passed.
func (t inTurns) routine(res reconcile.Result, err error) bool {
	return err == nil && !res.Requeue && t.poll > 0 && res.RequeueAfter >= t.poll //nolint:staticcheck // crossplane-runtime still asks for requeues with Requeue.
}
