// Package shardlease gives each replica of a sharded provider one shard to
// serve (--shards, #55 §4), by Kubernetes leader election: one Lease per
// shard, each held by the replica serving it. Crossplane's package manager
// runs a provider as one Deployment whose replicas share their arguments,
// so a replica cannot be told its shard: each one tries for every shard's
// Lease and serves the first it gets, giving the others back. With as many
// replicas as shards each serves one; a replica more stands by and takes
// over the shard of one that stops, as soon as its Lease is given back or
// expires.
package shardlease

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// Timing of the Leases. controller-runtime's (15 s, renewed within 10 s,
// every 2 s) lost a shard in make bench-shards at 1,000 clouds: while both
// replicas started, the API server answered the renewal's GET after more
// than 10 s, and the replica stopped, to start over and load the API
// server again. A replica now keeps its shard through 45 s of a slow API
// server; one that stops unannounced is replaced within about 65 s (the
// poll is a minute: its resources are looked at about one poll late).
// One that stops cleanly gives its Lease back at once.
const (
	leaseDuration = 60 * time.Second
	renewDeadline = 45 * time.Second
	retryPeriod   = 5 * time.Second
)

// TakeOver is the longest a replica that starts while another's Lease of
// its shard is held, unrenewed (its replica killed), waits to take it:
// client-go's elector counts the Lease valid for its whole duration from
// when the starting replica first reads it, then tries each retryPeriod.
const TakeOver = leaseDuration + retryPeriod

// Name is the Lease of shard i of n. The count is part of it, so that
// replicas of a Deployment rolled from n to m shards never hold one Lease
// for two different splits.
func Name(i, n int) string { return fmt.Sprintf("provider-cobaltcore-shard-%d-of-%d", i, n) }

// Acquire blocks until this replica (identity) holds the Lease of one of
// the n shards in namespace, and returns that shard and a channel closed
// when the Lease is lost (the replica must then stop serving at once: another
// may already serve the shard). Cancelling ctx gives the Lease back.
func Acquire(ctx context.Context, cs kubernetes.Interface, namespace, identity string, n int, log logr.Logger) (int, <-chan struct{}, error) {
	var (
		won      = make(chan int, n)
		lost     = make(chan struct{})
		lostOnce sync.Once
		mu       sync.Mutex
		chosen   = -1
		cancels  = make([]context.CancelFunc, n)
	)
	cancelAll := func(except int) {
		for j, c := range cancels {
			if j != except && c != nil {
				c()
			}
		}
	}
	for i := range n {
		le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
			Lock: uncancelled{&resourcelock.LeaseLock{
				LeaseMeta:  metav1.ObjectMeta{Name: Name(i, n), Namespace: namespace},
				Client:     cs.CoordinationV1(),
				LockConfig: resourcelock.ResourceLockConfig{Identity: identity},
			}},
			LeaseDuration:   leaseDuration,
			RenewDeadline:   renewDeadline,
			RetryPeriod:     retryPeriod,
			ReleaseOnCancel: true,
			Name:            Name(i, n),
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(context.Context) { won <- i },
				// Called when an elector stops, whether it led or not:
				// only the chosen shard's matters.
				OnStoppedLeading: func() {
					mu.Lock()
					defer mu.Unlock()
					if chosen == i {
						lostOnce.Do(func() { close(lost) })
					}
				},
			},
		})
		if err != nil {
			cancelAll(-1)
			return -1, nil, fmt.Errorf("cannot elect for shard %d of %d: %w", i, n, err)
		}
		ectx, cancel := context.WithCancel(ctx)
		cancels[i] = cancel
		go le.Run(ectx)
	}
	log.Info("trying for a shard", "shards", n, "namespace", namespace, "identity", identity)
	select {
	case i := <-won:
		mu.Lock()
		chosen = i
		mu.Unlock()
		// Electors that won meanwhile give their Lease back when cancelled.
		cancelAll(i)
		return i, lost, nil
	case <-ctx.Done():
		cancelAll(-1)
		return -1, nil, ctx.Err()
	}
}

// uncancelled lets a write of a Lease finish when its elector is cancelled
// meanwhile: a create the API server took after its client gave up leaves
// the Lease held by a replica that never knows, so the shard waits for it
// to expire (seen: 21 s at a start of two replicas). Finished, the write
// counts as won, and the cancelled elector gives the Lease back.
type uncancelled struct{ resourcelock.Interface }

func (l uncancelled) Create(ctx context.Context, r resourcelock.LeaderElectionRecord) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), renewDeadline)
	defer cancel()
	return l.Interface.Create(ctx, r)
}

func (l uncancelled) Update(ctx context.Context, r resourcelock.LeaderElectionRecord) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), renewDeadline)
	defer cancel()
	return l.Interface.Update(ctx, r)
}
