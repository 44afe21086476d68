package controller

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	keystonev1alpha1 "github.com/c5c3/consumer-plane/apis/keystone/v1alpha1"
)

// TestReadsAwaitOwnWrites stands a cache that lags the API server by a
// number of reads in front of a fake API server: a read of an object the
// client wrote returns that write once the cache holds it, within the wait;
// past the wait, the API server's; for an object it did not write, what
// the cache holds.
func TestReadsAwaitOwnWrites(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := keystonev1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		// lag is how many reads the cache answers with the version
		// before the write.
		lag    int
		await  time.Duration
		write  bool
		fresh  bool
		reads  int
		remain bool
		// counted is the outcome the wait metric counts the read under,
		// "" for a read that did not wait.
		counted string
	}{
		"the cache already holds the write":    {lag: 0, await: time.Second, write: true, fresh: true, reads: 1},
		"the cache holds it a few reads later": {lag: 3, await: time.Second, write: true, fresh: true, reads: 4, counted: "held"},
		// The API server read instead.
		"the cache does not hold it within the wait": {lag: 1000, await: 50 * time.Millisecond, write: true, fresh: true, counted: "read_live"},
		// Written by another client: the read does not wait for it.
		"written by someone else": {lag: 3, await: time.Second, write: false, fresh: false, reads: 1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := &keystonev1alpha1.Project{ObjectMeta: metav1.ObjectMeta{Name: "p"}}
			kube := fake.NewClientBuilder().WithScheme(scheme).WithObjects(p).WithStatusSubresource(p).Build()
			before := &keystonev1alpha1.Project{}
			if err := kube.Get(context.Background(), client.ObjectKey{Name: "p"}, before); err != nil {
				t.Fatal(err)
			}
			reads, lagging := 0, false
			cache := interceptor.NewClient(kube.(client.WithWatch), interceptor.Funcs{
				Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
					reads++
					if lagging && reads <= tc.lag {
						before.DeepCopyInto(obj.(*keystonev1alpha1.Project)) //nolint:forcetypeassert // the test's object
						return nil
					}
					return c.Get(ctx, key, obj, opts...)
				},
			})
			c := awaitingOwnWrites{Client: cache, live: kube, writes: newOwnWrites(), await: tc.await}
			if tc.write {
				w := before.DeepCopy()
				w.Status.AtProvider.ID = "abc"
				if err := c.Status().Update(context.Background(), w); err != nil {
					t.Fatal(err)
				}
			} else {
				w := before.DeepCopy()
				w.Status.AtProvider.ID = "abc"
				if err := kube.Status().Update(context.Background(), w); err != nil {
					t.Fatal(err)
				}
			}
			lagging = true
			waits := map[string]uint64{"held": waitsCounted(t, "held"), "read_live": waitsCounted(t, "read_live")}
			got := &keystonev1alpha1.Project{}
			if err := c.Get(context.Background(), client.ObjectKey{Name: "p"}, got); err != nil {
				t.Fatal(err)
			}
			if fresh := got.Status.AtProvider.ID == "abc"; fresh != tc.fresh {
				t.Errorf("read the write: %t, want %t (version %s, before the write %s)", fresh, tc.fresh, got.ResourceVersion, before.ResourceVersion)
			}
			if tc.reads > 0 && reads != tc.reads {
				t.Errorf("%d reads of the cache, want %d", reads, tc.reads)
			}
			if n := len(c.writes.written); n != 0 {
				t.Errorf("%d writes still remembered after the read, want none", n)
			}
			for outcome, before := range waits {
				want := before
				if outcome == tc.counted {
					want++
				}
				if got := waitsCounted(t, outcome); got != want {
					t.Errorf("reads counted as %s: %d, want %d", outcome, got-before, want-before)
				}
			}
		})
	}
}

// waitsCounted reads how many reads the wait metric counts under outcome.
func waitsCounted(t *testing.T, outcome string) uint64 {
	t.Helper()
	m := &dto.Metric{}
	h, ok := ownWriteWaits.WithLabelValues(outcome).(prometheus.Histogram)
	if !ok {
		t.Fatal("the wait metric is not a histogram")
	}
	if err := h.Write(m); err != nil {
		t.Fatal(err)
	}
	return m.GetHistogram().GetSampleCount()
}
