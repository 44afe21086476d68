package shardlease

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/kubernetes"

	"github.com/c5c3/consumer-plane/test/kubetest"
)

func TestMain(m *testing.M) { os.Exit(kubetest.Main(m)) }

type held struct {
	shard int
	lost  <-chan struct{}
	err   error
}

func acquire(ctx context.Context, cs kubernetes.Interface, identity string, n int) <-chan held {
	out := make(chan held, 1)
	go func() {
		i, lost, err := Acquire(ctx, cs, "default", identity, n, logr.Discard())
		out <- held{i, lost, err}
	}()
	return out
}

func wait(t *testing.T, what string, c <-chan held) held {
	t.Helper()
	select {
	case h := <-c:
		if h.err != nil {
			t.Fatalf("%s: %v", what, h.err)
		}
		return h
	case <-time.After(60 * time.Second):
		t.Fatalf("%s: no shard within 60 s", what)
	}
	return held{}
}

// Two replicas started together serve the two shards, one each, against
// the real API server's Leases; a third stands by, and takes the shard of
// one that stops (its Lease given back) while the other keeps its own.
func TestReplicasSplitTheShardsIntegration(t *testing.T) {
	cs := kubernetes.NewForConfigOrDie(kubetest.Config(t))
	ctxA, stopA := context.WithCancel(t.Context())
	defer stopA()
	a, b := acquire(ctxA, cs, "replica-a", 2), acquire(t.Context(), cs, "replica-b", 2)
	ha, hb := wait(t, "replica a", a), wait(t, "replica b", b)
	if ha.shard == hb.shard {
		t.Fatalf("replicas a and b both serve shard %d of 2", ha.shard)
	}

	c := acquire(t.Context(), cs, "replica-c", 2)
	select {
	case h := <-c:
		t.Fatalf("a third replica got shard %d (%v) while both are held", h.shard, h.err)
	case <-time.After(3 * retryPeriod):
	}
	stopA()
	select {
	case <-ha.lost:
	case <-time.After(30 * time.Second):
		t.Fatal("replica a was not told it lost its shard after it stopped")
	}
	if hc := wait(t, "replica c, standing by", c); hc.shard != ha.shard {
		t.Errorf("replica c took shard %d, want the one replica a gave back (%d)", hc.shard, ha.shard)
	}
	select {
	case <-hb.lost:
		t.Error("replica b lost its shard when replica a stopped")
	default:
	}
}
