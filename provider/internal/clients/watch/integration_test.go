package watch

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/consumer-plane/local/procs"
	"github.com/c5c3/consumer-plane/test/kubetest"
)

func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.Discard())
	os.Exit(kubetest.Main(m))
}

// TestUnreachableClusterIntegration freezes the real kube-apiserver a view
// watches (SIGSTOP: its connections stay open and nothing answers, as with
// a partitioned or hung API server): within the probes' bound the view
// stops serving its last state, names the cluster and since when, and
// wakes its readers; thawed, it serves again and wakes them again.
func TestUnreachableClusterIntegration(t *testing.T) {
	cfg := kubetest.Config(t)
	cs := NewClusters(Kind{
		Scheme: clientgoscheme.Scheme, New: func() client.Object { return &corev1.ConfigMap{} },
		Cluster: "the pool cluster", Objects: "ConfigMaps", Permission: "list and watch ConfigMaps",
	}, 4, time.Hour)
	changes := make(chan time.Time, 64)
	go func() {
		for range cs.Changes() {
			changes <- time.Now()
		}
	}()
	cl, err := cs.ForConfig("pool", cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if err := cl.List(ctx, &corev1.ConfigMapList{}); err != nil {
		t.Fatalf("the view of a cluster that answers: %v", err)
	}
	pid, err := procs.Child(os.Getpid(), "kube-apiserver")
	if err != nil {
		t.Fatal(err)
	}
	thaw, err := procs.Freeze(pid)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(thaw)
	frozen := time.Now()
	drain(changes)

	// At most probeMisses probes, each awaited probeTimeout, after the next
	// tick.
	bound := probeEvery*time.Duration(probeMisses+1) + probeTimeout
	var failed error
	for failed == nil && time.Since(frozen) < bound+5*time.Second {
		time.Sleep(500 * time.Millisecond)
		failed = cl.List(ctx, &corev1.ConfigMapList{})
	}
	if failed == nil {
		t.Fatalf("the view still serves its last state %s after the API server froze", time.Since(frozen).Round(time.Second))
	}
	t.Logf("unreachable after %s: %v", time.Since(frozen).Round(time.Second), failed)
	if msg := failed.Error(); !strings.Contains(msg, "the API of the pool cluster at "+cfg.Host+" has not answered since") {
		t.Errorf("the error does not say which cluster and since when: %q", msg)
	}
	if !woken(changes, 2*time.Second) {
		t.Error("its readers were not woken when the cluster stopped answering")
	}
	if again := cl.List(ctx, &corev1.ConfigMapList{}); again == nil || again.Error() != failed.Error() {
		t.Errorf("the error changed while the outage lasts (each change rewrites its readers' status): %q, then %v", failed, again)
	}

	thaw()
	back := time.Now()
	var err2 error = failed
	for err2 != nil && time.Since(back) < probeEvery+probeTimeout+5*time.Second {
		time.Sleep(500 * time.Millisecond)
		err2 = cl.List(ctx, &corev1.ConfigMapList{})
	}
	if err2 != nil {
		t.Fatalf("the view does not serve again %s after the API server answers: %v", time.Since(back).Round(time.Second), err2)
	}
	t.Logf("serving again %s after the API server answers", time.Since(back).Round(time.Second))
	if !woken(changes, 2*time.Second) {
		t.Error("its readers were not woken when the cluster answered again")
	}
}

func drain(c <-chan time.Time) {
	for {
		select {
		case <-c:
		default:
			return
		}
	}
}

func woken(c <-chan time.Time, within time.Duration) bool {
	select {
	case <-c:
		return true
	case <-time.After(within):
		return false
	}
}
