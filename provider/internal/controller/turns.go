package controller

import (
	"context"
	"sync"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// A service's reconciles are limited to --max-reconcile-rate a second
// (register.go gives each service one limiter). crossplane-runtime's
// ratelimiter.Reconciler applies the limit by reserving the limiter's next
// token for every request a worker takes and requeueing the request for
// that token's time. Once a service has more to read than its rate (past
// the sizing rule of docs/operations.md, or while a landscape catches up),
// the workers take every request as it comes due, each reserving a token
// further ahead: the reservations become the queue, in the order the
// requests were taken, and every step of a new cloud (its project, then its
// user, its grant, its application credential) waited behind the polls
// reserved before it (a new cloud Ready 42 s after its creation at 1,000
// clouds, against 1.3 s at 500: docs/benchmarks.md).
//
// Here a worker waits for its request's turn holding it, and the service
// gives its turns to the requests that are not routine polls first. A
// routine poll is a request the controller's priority queue handed out at
// controller-runtime's low priority: the reconcile before it ended with the
// resource Ready and nothing to do until the poll interval has passed, or
// the object came in its watch's first list. Anything that happened to the
// resource since (a change of its spec, its deletion, a wake by a resource
// it references) queued it again at the normal priority, which the queue
// keeps; an error, a create and a resource not yet Ready are requeued at
// the normal priority too, and a poll a worker holds is made work when its
// request is queued again meanwhile. A backlog therefore delays the drift
// polls of the resources that converged, not the resources converging nor
// a change a user made. (A first try, taken back in stop 87, classed a
// request by when its next look was due: a resource waiting on another,
// looked at again within the tests' 2-s poll, counted as a poll, a change
// of a polled one waited as a poll too, and the provider's integration
// tests ran 2-7 times slower.)
//
// The polls are not starved by a backlog of other work that never ends
// (thousands of resources failing and retried, a landscape catching up):
// while both wait, every pollEvery-th turn is a poll's.
//
// A kind whose options replace setupManaged's poll hook (StorageReport's)
// has no routine polls: its requests all take their turns as work, in the
// order they come, as crossplane-runtime's limiter gives them.
const pollEvery = 4

// Classes of a request waiting for its turn.
const (
	classWork = iota
	classPoll
	classes
)

var classNames = [classes]string{classWork: "work", classPoll: "poll"}

// turnsWaiting is how many requests each controller's workers hold while
// they wait for their service's turn, by class.
var turnsWaiting = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "cobaltcore_provider_turns_waiting",
	Help: "Requests a managed controller's workers hold while they wait for their service's next reconcile (--max-reconcile-rate a second per service), by class: work (a change, a create, an error's retry, a resource not yet Ready) or poll (a Ready resource's routine poll). Polls waiting in steady state mean the service has more resources than its rate reads within --poll (docs/operations.md, sizing).",
}, []string{"controller", "class"})

func init() { metrics.Registry.MustRegister(turnsWaiting) }

// turnTaker is one managed controller's part of its service's turns. Its
// queue records the priority each request is handed out with, its poll hook
// which reconciles ended with the resource Ready, and its reconciler waits
// for the request's turn.
type turnTaker struct {
	turns *turns
	inner reconcile.Reconciler
	// taken is the priority each request a worker holds was handed out with
	// (a request is held by one worker at a time).
	taken sync.Map
	// ready holds the requests whose reconcile, under way, ended with the
	// resource Ready (pollHook).
	ready sync.Map
	// held are the waiters of the polls the workers hold.
	held sync.Map
	// waiting are this controller's turnsWaiting gauges by class, resolved
	// once instead of at every reconcile.
	waiting [classes]prometheus.Gauge
}

// newTurnTaker returns the turns of controller name in l's (above) when l
// is a token bucket (ratelimiter.NewGlobal's), nil for any other limiter:
// the caller then applies it as crossplane-runtime does. The controllers
// given the same limiter share its turns. The caller sets inner, the
// reconciler the turns are taken for, before the controller starts.
func newTurnTaker(name string, l ratelimiter.RateLimiter) *turnTaker {
	b, ok := l.(*workqueue.TypedBucketRateLimiter[string])
	if !ok || b.Limiter == nil {
		return nil
	}
	t, _ := limiterTurns.LoadOrStore(b.Limiter, newTurns(b.Limiter.Wait))
	tt := &turnTaker{turns: t.(*turns)} //nolint:forcetypeassert // only turns are stored
	for c := range tt.waiting {
		tt.waiting[c] = turnsWaiting.WithLabelValues(name, classNames[c])
	}
	return tt
}

// limiterTurns are the turns of each service's limiter (*rate.Limiter).
var limiterTurns sync.Map

// normalPriority is controller-runtime's default priority, the one its
// watches give a created or changed object.
var normalPriority = 0

// Reconcile waits for req's turn, then reconciles it, and has it requeued
// at the low priority when the reconcile was a routine poll.
func (t *turnTaker) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	w := &waiter{turn: make(chan struct{})}
	if p, ok := t.taken.LoadAndDelete(req); ok && p.(int) < normalPriority { //nolint:forcetypeassert // only priorities are stored
		w.class = classPoll
		// A change or a wake while it waits makes it work (takenQueue).
		t.held.Store(req, w)
	}
	t.waiting[w.class].Inc()
	err := t.turns.wait(ctx, w)
	t.held.Delete(req)
	// The class it ended its wait in: promote changes it under the turns'
	// lock before the turn is given.
	t.waiting[w.class].Dec()
	if err != nil {
		// Only a cancelled context ends the wait: the manager is stopping.
		return reconcile.Result{}, err
	}
	t.ready.Delete(req)
	res, err := t.inner.Reconcile(ctx, req)
	_, ready := t.ready.LoadAndDelete(req)
	if err == nil && ready && res.RequeueAfter > 0 {
		res.Priority = new(handler.LowPriority)
	} else {
		// Not the priority the request was taken with: a resource of the
		// watch's first list that needs work gets the normal one.
		res.Priority = new(normalPriority)
	}
	return res, err
}

// promote makes the poll a worker holds for req work, when one does:
// something happened to the resource while its poll waited.
func (t *turnTaker) promote(req reconcile.Request) {
	if w, ok := t.held.Load(req); ok && t.turns.promote(w.(*waiter)) { //nolint:forcetypeassert // only waiters are stored
		t.waiting[classPoll].Dec()
		t.waiting[classWork].Inc()
	}
}

// pollHook is h, recording which reconciles ended with the resource Ready:
// crossplane-runtime's managed reconciler asks it for the next poll once a
// resource is as it should be (or was just updated to be).
func (t *turnTaker) pollHook(h managed.PollIntervalHook) managed.PollIntervalHook {
	return func(mg resource.Managed, poll time.Duration) time.Duration {
		if mg.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue {
			t.ready.Store(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: mg.GetNamespace(), Name: mg.GetName()}}, struct{}{})
		}
		return h(mg, poll)
	}
}

// newQueue is the controller's queue: controller-runtime's priority queue,
// as the controller would make it, recording the priority each request is
// handed out with, and promoting a held poll whose request is queued again
// at the normal priority.
func (t *turnTaker) newQueue(log logr.Logger) func(string, workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
	return func(name string, rl workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
		return takenQueue{
			PriorityQueue: priorityqueue.New(name, func(o *priorityqueue.Opts[reconcile.Request]) {
				o.Log = log.WithValues("controller", name)
				o.RateLimiter = rl
			}),
			turns: t,
		}
	}
}

// takenQueue is a priority queue that tells its turnTaker the priority each
// request is handed out with, and each request queued at the normal
// priority or above (a watch's event, a wake). controller-runtime's workers
// take requests with GetWithPriority only; Get tells too.
type takenQueue struct {
	priorityqueue.PriorityQueue[reconcile.Request]
	turns *turnTaker
}

func (q takenQueue) GetWithPriority() (reconcile.Request, int, bool) {
	req, p, shutdown := q.PriorityQueue.GetWithPriority()
	if !shutdown {
		q.turns.taken.Store(req, p)
	}
	return req, p, shutdown
}

func (q takenQueue) Get() (reconcile.Request, bool) {
	req, _, shutdown := q.GetWithPriority()
	return req, shutdown
}

func (q takenQueue) AddWithOpts(o priorityqueue.AddOpts, reqs ...reconcile.Request) {
	if o.Priority == nil || *o.Priority >= normalPriority {
		for _, req := range reqs {
			q.turns.promote(req)
		}
	}
	q.PriorityQueue.AddWithOpts(o, reqs...)
}

// Add is AddWithOpts at the normal priority (a source.Channel's events, the
// wakes, come through it).
func (q takenQueue) Add(req reconcile.Request) { q.AddWithOpts(priorityqueue.AddOpts{}, req) }

// turns hands out a limiter's tokens one at a time: to the work waiting
// first, then to the polls, each in the order they came, and every
// pollEvery-th turn to a poll while both wait.
type turns struct {
	take func(context.Context) error

	mu sync.Mutex
	// waiting are the waiters by class.
	waiting [classes][]*waiter
	// worked counts the turns given to work in a row while polls waited.
	worked  int
	arrived chan struct{}
	start   sync.Once
}

// A waiter waits for its turn in its class: turn is closed when it is
// given. Its class changes only under the turns' lock.
type waiter struct {
	turn  chan struct{}
	class int
}

// newTurns returns the turns of the tokens take waits for.
func newTurns(take func(context.Context) error) *turns {
	return &turns{take: take, arrived: make(chan struct{}, 1)}
}

// wait returns when w's turn has come, or with ctx's error.
func (t *turns) wait(ctx context.Context, w *waiter) error {
	t.start.Do(func() { go t.give() })
	t.mu.Lock()
	t.waiting[w.class] = append(t.waiting[w.class], w)
	t.mu.Unlock()
	select {
	case t.arrived <- struct{}{}:
	default:
	}
	select {
	case <-w.turn:
		return nil
	case <-ctx.Done():
		t.mu.Lock()
		defer t.mu.Unlock()
		t.remove(w)
		// A turn given meanwhile is lost with the request: one token.
		return ctx.Err()
	}
}

// promote moves w, when it waits as a poll, to the end of the work, and
// says whether it did.
func (t *turns) promote(w *waiter) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if w.class != classPoll || !t.remove(w) {
		return false
	}
	w.class = classWork
	t.waiting[classWork] = append(t.waiting[classWork], w)
	return true
}

// remove takes w out of its class's waiters, and says whether it was
// there; t.mu is held.
func (t *turns) remove(w *waiter) bool {
	for i, o := range t.waiting[w.class] {
		if o == w {
			t.waiting[w.class] = append(t.waiting[w.class][:i], t.waiting[w.class][i+1:]...)
			return true
		}
	}
	return false
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
	return len(t.waiting[classWork])+len(t.waiting[classPoll]) > 0
}

// next gives the next waiter its turn.
func (t *turns) next() {
	t.mu.Lock()
	defer t.mu.Unlock()
	work, polls := len(t.waiting[classWork]) > 0, len(t.waiting[classPoll]) > 0
	class := classWork
	switch {
	case work && polls && t.worked >= pollEvery-1, !work && polls:
		class = classPoll
		t.worked = 0
	case !work:
		return
	case polls:
		t.worked++
	}
	close(t.waiting[class][0].turn)
	t.waiting[class] = t.waiting[class][1:]
}
