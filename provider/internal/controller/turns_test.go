package controller

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/go-logr/logr"
	"golang.org/x/time/rate"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	keystonev1alpha1 "github.com/c5c3/consumer-plane/apis/keystone/v1alpha1"
	"github.com/c5c3/consumer-plane/test/kubetest"
)

// ending is a reconciler that returns the same result to every request,
// the resource Ready or not as the poll hook is told.
type ending struct {
	hook  managed.PollIntervalHook
	ready bool
	res   reconcile.Result
	err   error
}

func (e *ending) Reconcile(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
	p := &keystonev1alpha1.Project{ObjectMeta: metav1.ObjectMeta{Name: req.Name}}
	if e.ready {
		p.SetConditions(xpv2.Available())
	}
	e.hook(p, time.Minute)
	return e.res, e.err
}

func TestTurnsRequeueTheResourcesReadyAtLowPriority(t *testing.T) {
	const poll = time.Minute
	cases := map[string]struct {
		ready bool
		res   reconcile.Result
		err   error
		want  int
	}{
		"Ready, as it should be: a routine poll":              {ready: true, res: reconcile.Result{RequeueAfter: poll}, want: handler.LowPriority},
		"not Ready, looked at again within the poll interval": {res: reconcile.Result{RequeueAfter: poll}, want: 0},
		"Ready, but the status write failed":                  {ready: true, res: reconcile.Result{RequeueAfter: poll}, err: errors.New("conflict"), want: 0},
		"created: looked at again at once":                    {res: reconcile.Result{Requeue: true}, want: 0},
		"done: nothing requeued":                              {ready: true, want: 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tt := newTurnTaker("test", ratelimiter.NewGlobal(10))
			tt.inner = &ending{hook: tt.pollHook(PollWhileWaiting(time.Now)), ready: tc.ready, res: tc.res, err: tc.err}
			got, err := tt.Reconcile(context.Background(), reconcile.Request{NamespacedName: types.NamespacedName{Name: "p"}})
			if !errors.Is(err, tc.err) {
				t.Fatalf("error %v, want %v", err, tc.err)
			}
			if got.Priority == nil || *got.Priority != tc.want {
				t.Errorf("priority %v, want %d", got.Priority, tc.want)
			}
			if got.RequeueAfter != tc.res.RequeueAfter || got.Requeue != tc.res.Requeue { //nolint:staticcheck // the reconciler's own field
				t.Errorf("result %+v, want the inner reconciler's %+v with a priority", got, tc.res)
			}
		})
	}
}

func TestTurnsOfAnotherLimiterAreCrossplanes(t *testing.T) {
	if tt := newTurnTaker("test", workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Second, time.Minute)); tt != nil {
		t.Error("a limiter that is not a token bucket has turns; crossplane-runtime's reconciler should apply it")
	}
}

func TestTurnsWaitForAToken(t *testing.T) {
	// One token, never another: the second request waits until its
	// context ends, and its reconciler is not called.
	calls := 0
	tt := newTurnTaker("test", &workqueue.TypedBucketRateLimiter[string]{Limiter: rate.NewLimiter(0, 1)})
	tt.inner = reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
		calls++
		return reconcile.Result{}, nil
	})
	if _, err := tt.Reconcile(context.Background(), reconcile.Request{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := tt.Reconcile(ctx, reconcile.Request{}); err == nil {
		t.Error("a request without a token was reconciled")
	}
	if calls != 1 {
		t.Errorf("the reconciler was called %d times, want once", calls)
	}
}

// served hands out tokens one at a time and records the order in which
// the waiters got their turns.
type served struct {
	t      *testing.T
	tokens chan struct{}
	turns  *turns
	mu     sync.Mutex
	order  []string
}

func newServed(t *testing.T) *served {
	s := &served{t: t, tokens: make(chan struct{})}
	s.turns = newTurns(func(ctx context.Context) error {
		select {
		case <-s.tokens:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	return s
}

func (s *served) waiters() int {
	s.turns.mu.Lock()
	defer s.turns.mu.Unlock()
	return len(s.turns.waiting[classWork]) + len(s.turns.waiting[classPoll])
}

func (s *served) got() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.order...)
}

func (s *served) until(what string, ok func() bool) {
	s.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !ok(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			s.t.Fatalf("not %s within 10 s", what)
		}
	}
}

// arrive has name wait in wait, and returns once it waits.
func (s *served) arrive(name string, wait func() error) {
	s.t.Helper()
	n := s.waiters()
	go func() {
		if err := wait(); err != nil {
			s.t.Error(err)
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		s.order = append(s.order, name)
	}()
	s.until(name+" waiting", func() bool { return s.waiters() == n+1 })
}

// serve gives n turns, one at a time.
func (s *served) serve(n int) {
	s.t.Helper()
	for range n {
		before := len(s.got())
		s.tokens <- struct{}{}
		s.until("served", func() bool { return len(s.got()) == before+1 })
	}
}

func TestTurnsGoToWorkFirstAndEveryFourthToAPoll(t *testing.T) {
	s := newServed(t)
	for _, name := range []string{"poll-1", "poll-2", "work-1", "poll-3", "work-2", "work-3", "work-4", "work-5"} {
		class := classWork
		if strings.HasPrefix(name, "poll") {
			class = classPoll
		}
		s.arrive(name, func() error {
			return s.turns.wait(context.Background(), &waiter{turn: make(chan struct{}), class: class})
		})
	}
	s.serve(8)
	want := "[work-1 work-2 work-3 poll-1 work-4 work-5 poll-2 poll-3]"
	if got := fmt.Sprint(s.got()); got != want {
		t.Errorf("turns given in the order %s, want %s", got, want)
	}
}

func TestTurnsClassIsThePriorityTheRequestWasTakenWithOrQueuedAtSince(t *testing.T) {
	s := newServed(t)
	tt := newTurnTaker("test", ratelimiter.NewGlobal(10))
	tt.turns = s.turns
	tt.inner = reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
		return reconcile.Result{}, nil
	})
	q, ok := tt.newQueue(logr.Discard())("test", workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]()).(priorityqueue.PriorityQueue[reconcile.Request])
	if !ok {
		t.Fatal("the controller's queue is not a priority queue")
	}
	defer q.ShutDown()
	req := func(name string) reconcile.Request {
		return reconcile.Request{NamespacedName: types.NamespacedName{Name: name}}
	}
	// All three requeued by a routine poll; "changed" then queued by its
	// watch at the normal priority before a worker takes it, and
	// "woken" after, while a worker holds it.
	q.AddWithOpts(priorityqueue.AddOpts{Priority: new(handler.LowPriority)}, req("polled"), req("changed"), req("woken"))
	q.AddWithOpts(priorityqueue.AddOpts{}, req("changed"))
	taken := map[string]reconcile.Request{}
	for range 3 {
		r, shutdown := q.Get()
		if shutdown {
			t.Fatal("the queue shut down")
		}
		taken[r.Name] = r
	}
	for _, name := range []string{"polled", "woken", "changed"} {
		s.arrive(name, func() error {
			_, err := tt.Reconcile(context.Background(), taken[name])
			return err
		})
	}
	q.Add(req("woken"))
	s.serve(3)
	if got, want := fmt.Sprint(s.got()), "[changed woken polled]"; got != want {
		t.Errorf("turns given in the order %s, want %s: a request queued at the normal priority waited as a poll", got, want)
	}
}

// observes records the Projects a managed controller observed, in order,
// each with the generation it saw, and has every one Ready and as it
// should be.
type observes struct {
	mu   sync.Mutex
	seen []string
}

func (o *observes) Connect(context.Context, *keystonev1alpha1.Project) (managed.TypedExternalClient[*keystonev1alpha1.Project], error) {
	return managed.TypedExternalClientFns[*keystonev1alpha1.Project]{
		ObserveFn: func(_ context.Context, p *keystonev1alpha1.Project) (managed.ExternalObservation, error) {
			o.mu.Lock()
			defer o.mu.Unlock()
			o.seen = append(o.seen, fmt.Sprintf("%s/%d", p.Name, p.Generation))
			p.SetConditions(xpv2.Available())
			return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
		},
		DisconnectFn: func(context.Context) error { return nil },
	}, nil
}

func (o *observes) snapshot() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.seen...)
}

// after is how many observes of other Projects came between the n-th
// observe and the first of want after it, or -1 when none came yet.
func (o *observes) after(n int, want string) int {
	for i, s := range o.snapshot()[n:] {
		if s == want {
			return i
		}
	}
	return -1
}

// While a service's Ready resources need more polls than its rate, a new
// resource and a change of a polled one are observed next, not behind the
// polls: a managed controller as setupManaged builds it (controller-
// runtime's priority queue, crossplane-runtime's managed reconciler, the
// turns), against a real API server.
func TestTurnsPutWorkBeforeABacklogOfPolls(t *testing.T) {
	const (
		polled = 40
		poll   = 200 * time.Millisecond
		perSec = 20 // 40 resources every 0.2 s want 200 a second: a backlog
	)
	mgr := kubetest.Manager(t, keystonev1alpha1.AddToScheme)
	rec := &observes{}
	o := controller.Options{
		Logger:                  logging.NewNopLogger(),
		PollInterval:            poll,
		MaxConcurrentReconciles: perSec, // as the provider's flag sets both
		GlobalRateLimiter:       &workqueue.TypedBucketRateLimiter[string]{Limiter: rate.NewLimiter(perSec, 1)},
	}
	gvk := keystonev1alpha1.SchemeGroupVersion.WithKind("Project")
	if err := SetupManaged(mgr, o, gvk, &keystonev1alpha1.ProjectList{}, managed.WithTypedExternalConnector[*keystonev1alpha1.Project](rec)); err != nil {
		t.Fatal(err)
	}
	kube := kubetest.Start(t, mgr)
	ctx := context.Background()
	prefix := fmt.Sprintf("turns-%d-", time.Now().UnixNano()%100000)
	create := func(name string) {
		t.Helper()
		p := &keystonev1alpha1.Project{ObjectMeta: metav1.ObjectMeta{Name: prefix + name}}
		p.Spec.ForProvider.Name = prefix + name
		p.Spec.ProviderConfigReference = &xpv2.Reference{Name: "none"}
		if err := kube.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = kube.Delete(context.Background(), p) }) //nolint:errcheck // best effort: the API server goes with the test binary
	}
	// The Projects are created once the controller watches, so that each
	// comes at the normal priority (a watch's first list gives the low
	// one): only their polls' requeues put them behind.
	create("polled-00")
	kubetest.Until(t, "the controller observing", time.Minute, func() error {
		if len(rec.snapshot()) == 0 {
			return errors.New("nothing observed")
		}
		return nil
	})
	for i := 1; i < polled; i++ {
		create(fmt.Sprintf("polled-%02d", i))
	}
	kubetest.Until(t, "every Project observed three times", time.Minute, func() error {
		if n := len(rec.snapshot()); n < 3*polled {
			return fmt.Errorf("%d observes", n)
		}
		return nil
	})

	// At most the polls given their turns while the event was on its way
	// (at 20 a second, a few) come before; behind the polls the 20 workers
	// hold (first come, first served), 20 would, and behind the polls
	// crossplane-runtime's limiter reserved turns for, 40.
	const within = 8
	before := len(rec.snapshot())
	create("new")
	kubetest.Until(t, "the new Project observed", time.Minute, func() error {
		if rec.after(before, prefix+"new/1") < 0 {
			return errors.New("not yet")
		}
		return nil
	})
	if n := rec.after(before, prefix+"new/1"); n > within {
		t.Errorf("the new Project was observed after %d polls of the others, want at most %d: it waited behind the polls", n, within)
	} else {
		t.Logf("%d polls of the others before the new Project's first observe", n)
	}

	changed := &keystonev1alpha1.Project{}
	if err := kube.Get(ctx, types.NamespacedName{Name: prefix + "polled-07"}, changed); err != nil {
		t.Fatal(err)
	}
	changed.Spec.ForProvider.Description = "changed by the test"
	before = len(rec.snapshot())
	if err := kube.Update(ctx, changed); err != nil {
		t.Fatal(err)
	}
	seen := fmt.Sprintf("%s/%d", changed.Name, changed.Generation)
	kubetest.Until(t, "the change observed", time.Minute, func() error {
		if rec.after(before, seen) < 0 {
			return errors.New("not yet")
		}
		return nil
	})
	if n := rec.after(before, seen); n > within {
		t.Errorf("the changed Project was observed after %d polls of the others, want at most %d: its change waited behind the polls", n, within)
	} else {
		t.Logf("%d polls of the others before the change was observed", n)
	}
}
