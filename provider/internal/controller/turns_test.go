package controller

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"
	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/c5c3/consumer-plane/test/kubetest"
)

// answer is a reconciler that returns the same result to every request.
type answer struct {
	res   reconcile.Result
	err   error
	calls int
}

func (a *answer) Reconcile(context.Context, reconcile.Request) (reconcile.Result, error) {
	a.calls++
	return a.res, a.err
}

func TestTurnsRequeueRoutinePollsAtLowPriority(t *testing.T) {
	const poll = time.Minute
	cases := map[string]struct {
		res  reconcile.Result
		err  error
		want int
	}{
		"a poll: Ready, as it should be":     {res: reconcile.Result{RequeueAfter: poll}, want: handler.LowPriority},
		"a poll past the interval (jitter)":  {res: reconcile.Result{RequeueAfter: poll + time.Second}, want: handler.LowPriority},
		"not Ready: looked at again soon":    {res: reconcile.Result{RequeueAfter: 2 * time.Second}, want: 0},
		"created: looked at again at once":   {res: reconcile.Result{Requeue: true}, want: 0},
		"an error, retried with its backoff": {res: reconcile.Result{RequeueAfter: poll}, err: errors.New("boom"), want: 0},
		"done: nothing requeued":             {res: reconcile.Result{}, want: 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			inner := &answer{res: tc.res, err: tc.err}
			r := takeTurns("test", inner, ratelimiter.NewGlobal(10), poll)
			got, err := r.Reconcile(context.Background(), reconcile.Request{})
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

func TestTurnsWaitForAToken(t *testing.T) {
	// One token, never another: the second request waits until its
	// context ends, and its reconciler is not called.
	inner := &answer{}
	r := takeTurns("test", inner, &workqueue.TypedBucketRateLimiter[string]{Limiter: rate.NewLimiter(0, 1)}, time.Minute)
	if _, err := r.Reconcile(context.Background(), reconcile.Request{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r.Reconcile(ctx, reconcile.Request{}); err == nil {
		t.Error("a request without a token was reconciled")
	}
	if inner.calls != 1 {
		t.Errorf("the reconciler was called %d times, want once", inner.calls)
	}
}

func TestTurnsGoToOtherRequestsBeforeRoutinePolls(t *testing.T) {
	tokens := make(chan struct{})
	tr := newTurns(func(ctx context.Context) error {
		select {
		case <-tokens:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	waiters := func() int {
		tr.mu.Lock()
		defer tr.mu.Unlock()
		return len(tr.waiting[0]) + len(tr.waiting[1])
	}
	var mu sync.Mutex
	var order []string
	served := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(order)
	}
	until := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !ok(); time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("not %s within 10 s", what)
			}
		}
	}
	arrivals := []struct {
		name    string
		routine bool
	}{{"poll-1", true}, {"poll-2", true}, {"new-1", false}, {"poll-3", true}, {"new-2", false}}
	for i, a := range arrivals {
		go func() {
			if err := tr.wait(context.Background(), a.routine); err != nil {
				t.Error(err)
			}
			mu.Lock()
			defer mu.Unlock()
			order = append(order, a.name)
		}()
		until("waiting", func() bool { return waiters() == i+1 })
	}
	for i := range arrivals {
		tokens <- struct{}{}
		until("served", func() bool { return served() == i+1 })
	}
	want := []string{"new-1", "new-2", "poll-1", "poll-2", "poll-3"}
	if fmt.Sprint(order) != fmt.Sprint(want) {
		t.Errorf("turns given in the order %v, want %v", order, want)
	}
}

func TestTurnsOfAnotherLimiterAreCrossplanes(t *testing.T) {
	other := workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Second, time.Minute)
	if _, ok := takeTurns("test", &answer{}, other, time.Minute).(*ratelimiter.Reconciler); !ok {
		t.Error("a limiter that is not a token bucket is not applied as crossplane-runtime applies it")
	}
}

// order records the requests a controller reconciled, in order, and asks
// for each to be polled again.
type order struct {
	mu   sync.Mutex
	seen []string
	poll time.Duration
}

func (o *order) Reconcile(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.seen = append(o.seen, req.Name)
	return reconcile.Result{RequeueAfter: o.poll}, nil
}

func (o *order) snapshot() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.seen...)
}

// A resource created while a service's polls need more reconciles than its
// rate is reconciled next, not behind the polls: the controller as
// setupManaged builds it (controller-runtime's priority queue, the rate's
// turns), against a real API server.
func TestTurnsPutANewResourceBeforeABacklogOfPolls(t *testing.T) {
	const (
		polled = 40
		poll   = 200 * time.Millisecond
		perSec = 20 // 40 resources every 0.2 s want 200 a second: a backlog
	)
	mgr := kubetest.Manager(t, clientgoscheme.AddToScheme)
	kube, err := client.New(mgr.GetConfig(), client.Options{Scheme: mgr.GetScheme()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "turns-"}}
	if err := kube.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	rec := &order{poll: poll}
	limiter := &workqueue.TypedBucketRateLimiter[string]{Limiter: rate.NewLimiter(perSec, 1)}
	inNamespace := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetNamespace() == ns.Name })
	if err := ctrl.NewControllerManagedBy(mgr).Named("turns-test").
		For(&corev1.ConfigMap{}, builder.WithPredicates(inNamespace)).
		WithOptions(controller.Options{MaxConcurrentReconciles: 2, RateLimiter: ratelimiter.NewController()}).
		Complete(takeTurns("turns-test", rec, limiter, poll)); err != nil {
		t.Fatal(err)
	}
	kubetest.Start(t, mgr)

	// The resources are created once the controller watches, so that each
	// comes at the normal priority (a watch's first list gives the low
	// one): only its polls' requeues put it behind.
	create := func(name string) {
		t.Helper()
		if err := kube.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: name}}); err != nil {
			t.Fatal(err)
		}
	}
	create("polled-00")
	kubetest.Until(t, "the controller watching", time.Minute, func() error {
		if len(rec.snapshot()) == 0 {
			return errors.New("nothing reconciled")
		}
		return nil
	})
	for i := 1; i < polled; i++ {
		create(fmt.Sprintf("polled-%02d", i))
	}
	// Every resource reconciled twice: the queue is a backlog of polls,
	// each holding its turn.
	kubetest.Until(t, "every resource reconciled twice", time.Minute, func() error {
		if n := len(rec.snapshot()); n < 2*polled {
			return fmt.Errorf("%d reconciles", n)
		}
		return nil
	})
	create("new")
	before := len(rec.snapshot())
	var between int
	kubetest.Until(t, "the new resource reconciled", time.Minute, func() error {
		seen := rec.snapshot()
		for i, name := range seen[before:] {
			if name == "new" {
				between = i
				return nil
			}
		}
		return fmt.Errorf("not yet, %d polls since its creation", len(seen)-before)
	})
	// Ahead of it at most the requests the two workers held, and those
	// taken while its watch event was on its way (at 20 a second, a few);
	// taken in the order they reserved their turns, all 40 polls were.
	if between > 6 {
		t.Errorf("the new resource was reconciled after %d polls of the others, want at most 6: it waited behind the backlog", between)
	}
	t.Logf("%d polls of the others before the new resource's first reconcile", between)
}
