package controller

import (
	"context"
	"sync"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// inTurns is crossplane-runtime's rate limit of a service's reconciles
// (ratelimiter.Reconciler), with routine polls behind every other request.
//
// crossplane-runtime's Reconciler reserves the limiter's next token for
// each request a worker takes, and requeues the request for that token's
// time when it lies ahead. Once a service's resources need more
// reconciles than its rate (past the sizing rule of docs/operations.md,
// or while a landscape catches up), the workers take every queued request
// at once, each reserving the next token: the reservations become the
// queue, in the order the requests were taken, and a new cloud's first
// reconcile waited behind every poll reserved before it (a minute's polls
// at 1,000 clouds). Here a worker waits for its turn holding its request,
// so only the requests the workers hold wait for tokens, and the service's
// turns go to the requests that are not routine polls first: those the
// controller's priority queue hands out first, too.
//
// A routine poll is a reconcile that ends with nothing to do until the
// poll interval has passed (no error, as for a resource Ready and as it
// should be: PollWhileWaiting). Its request is requeued at
// controller-runtime's low priority, and waits for its next turn behind
// the others; every other outcome (an error, a create, a resource not
// Ready) is requeued at the normal priority, and a resource created or
// changed is queued at the normal priority by its watch. A backlog then
// delays the drift polls of the resources that converged, not the
// resources converging. The turns know a request's last outcome, not why
// the queue handed it out: a Ready resource whose spec was changed is
// taken from the queue at once but waits for its token as a poll, behind
// at most the requests the workers hold.
type inTurns struct {
	inner reconcile.Reconciler
	turns *turns
	poll  time.Duration
	// polled holds the requests whose last reconcile was a routine poll.
	polled sync.Map
}

// takeTurns limits r to l's rate (inTurns) when l is a token bucket
// (ratelimiter.NewGlobal's); any other limiter is applied as
// crossplane-runtime applies it. The controllers given the same limiter
// share its turns.
func takeTurns(name string, r reconcile.Reconciler, l ratelimiter.RateLimiter, poll time.Duration) reconcile.Reconciler {
	b, ok := l.(*workqueue.TypedBucketRateLimiter[string])
	if !ok || b.Limiter == nil {
		return ratelimiter.NewReconciler(name, r, l)
	}
	t, _ := limiterTurns.LoadOrStore(b.Limiter, newTurns(b.Limiter.Wait))
	return &inTurns{inner: r, turns: t.(*turns), poll: poll} //nolint:forcetypeassert // only turns are stored
}

// limiterTurns are the turns of each service's limiter (*rate.Limiter).
var limiterTurns sync.Map

// lowPriority is the priority of a routine poll: controller-runtime's, the
// one its watches give the objects of their first list.
var lowPriority = handler.LowPriority

func (t *inTurns) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	_, routine := t.polled.Load(req)
	if err := t.turns.wait(ctx, routine); err != nil {
		// Only a cancelled context ends the wait: the manager is stopping.
		return reconcile.Result{}, err
	}
	res, err := t.inner.Reconcile(ctx, req)
	if t.routine(res, err) {
		t.polled.Store(req, struct{}{})
		res.Priority = &lowPriority
	} else {
		t.polled.Delete(req)
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
func (t *inTurns) routine(res reconcile.Result, err error) bool {
	return err == nil && !res.Requeue && t.poll > 0 && res.RequeueAfter >= t.poll //nolint:staticcheck // crossplane-runtime still asks for requeues with Requeue.
}

// turns hands out a limiter's tokens one at a time: to the requests
// waiting at the normal priority first, then to the routine polls, each
// in the order they came.
type turns struct {
	take func(context.Context) error

	mu sync.Mutex
	// waiting are the waiters' channels, [0] the normal ones, [1] the
	// routine polls; a channel is closed when its turn is given.
	waiting [2][]chan struct{}
	arrived chan struct{}
	start   sync.Once
}

// newTurns returns the turns of the tokens take waits for.
func newTurns(take func(context.Context) error) *turns {
	return &turns{take: take, arrived: make(chan struct{}, 1)}
}

// wait returns when the request's turn has come, or with ctx's error.
func (t *turns) wait(ctx context.Context, routine bool) error {
	t.start.Do(func() { go t.give() })
	class := 0
	if routine {
		class = 1
	}
	turn := make(chan struct{})
	t.mu.Lock()
	t.waiting[class] = append(t.waiting[class], turn)
	t.mu.Unlock()
	select {
	case t.arrived <- struct{}{}:
	default:
	}
	select {
	case <-turn:
		return nil
	case <-ctx.Done():
		t.mu.Lock()
		defer t.mu.Unlock()
		for i, c := range t.waiting[class] {
			if c == turn {
				t.waiting[class] = append(t.waiting[class][:i], t.waiting[class][i+1:]...)
				break
			}
		}
		// A turn given meanwhile is lost with the request: one token.
		return ctx.Err()
	}
}

// give takes a token whenever a request waits, and gives it its turn; it
// runs as long as the process (one per service).
func (t *turns) give() {
	for range t.arrived {
		for t.pending() {
			if err := t.take(context.Background()); err != nil {
				// A limiter that can give no token (a burst of 0): every
				// waiter would wait for ever. Not one of ratelimiter.NewGlobal's.
				time.Sleep(time.Second)
				continue
			}
			t.next()
		}
	}
}

func (t *turns) pending() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.waiting[0])+len(t.waiting[1]) > 0
}

// next gives the first waiter of the first class that has one its turn.
func (t *turns) next() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for class := range t.waiting {
		if len(t.waiting[class]) > 0 {
			close(t.waiting[class][0])
			t.waiting[class] = t.waiting[class][1:]
			return
		}
	}
}
