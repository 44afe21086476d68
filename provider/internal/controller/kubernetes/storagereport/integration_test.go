package storagereport

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/google/go-cmp/cmp"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/consumer-plane/apis/kubernetes/v1alpha1"
	"github.com/c5c3/consumer-plane/provider/internal/clients/remotekube"
	"github.com/c5c3/consumer-plane/provider/internal/clients/watch"
	"github.com/c5c3/consumer-plane/provider/internal/controller/kubernetes/kubernetestest"
	"github.com/c5c3/consumer-plane/provider/internal/controller/viewtest"
	"github.com/c5c3/consumer-plane/test/kubetest"
)

// One API server plays both clusters: the management cluster and the
// storage pool's, with the storage agent's CephStatus CRD as the pool's
// layer installs it.
func TestMain(m *testing.M) {
	os.Exit(kubetest.Main(m, "../../../../package/crds", "../../../../../cluster/crds/agents"))
}

const (
	// patience bounds every wait. The controller polls only hourly, so a
	// change seen within it came through the watch or the staleness timer.
	patience = 20 * time.Second
	// every is the agent's interval in these tests: its report is stale
	// three of them after it was published.
	every = 2 * time.Second
)

// TestStorageReportIntegration reads a storage agent's CephStatus through a
// ProviderConfig's kubeconfig: the report without its time, a heartbeat
// that changes nothing, a report that stops coming (stale within three of
// the agent's intervals, naming its time) and comes again, a changed report
// within seconds.
func TestStorageReportIntegration(t *testing.T) {
	kube := start(t)
	ctx := context.Background()
	pc, _ := kubernetestest.ProviderConfig(t, kube, "storage-st-pool-it")
	rep := &v1alpha1.StorageReport{
		ObjectMeta: metav1.ObjectMeta{Name: "storage-st-pool-it"},
		Spec: v1alpha1.StorageReportSpec{
			ClusterManagedResourceSpec: xpv2.ClusterManagedResourceSpec{ProviderConfigReference: &xpv2.Reference{Name: pc.Name}},
		},
	}
	if err := kube.Create(ctx, rep); err != nil {
		t.Fatal(err)
	}

	t.Run("nothing published yet: Ready, without a report", func(t *testing.T) {
		waitFor(ctx, t, kube, rep.Name, v1alpha1.StorageReportObservation{})
	})

	warn := map[string]any{
		"health":   "HEALTH_WARN",
		"checks":   []any{map[string]any{"name": "OSD_DOWN", "severity": "HEALTH_WARN", "summary": "1 osds down"}},
		"capacity": map[string]any{"totalBytes": int64(549755813888000), "usedBytes": int64(140737488355328), "availableBytes": int64(409018325532672)},
		"osds":     map[string]any{"total": int64(30), "up": int64(29), "in": int64(30)},
		"monitors": map[string]any{"total": int64(3), "inQuorum": int64(3)},
	}
	wantWarn := v1alpha1.StorageReportObservation{
		Health: "HEALTH_WARN", Checks: []v1alpha1.StorageHealthCheck{{Name: "OSD_DOWN", Severity: "HEALTH_WARN", Summary: "1 osds down"}},
		TotalBytes: 549755813888000, UsedBytes: 140737488355328, AvailableBytes: 409018325532672,
		OSDs: 30, OSDsUp: 29, OSDsIn: 30, Monitors: 3, MonitorsInQuorum: 3,
		ReportInterval: &metav1.Duration{Duration: every},
	}
	publish(ctx, t, kube, warn, time.Now())
	t.Run("the agent's report, without its time", func(t *testing.T) { waitFor(ctx, t, kube, rep.Name, wantWarn) })

	t.Run("reports that only say the agent still runs change nothing", func(t *testing.T) {
		before := get(ctx, t, kube, rep.Name)
		// Four reports, an interval apart: two staleness deadlines pass,
		// each looked at, and each finds a newer report.
		for range 4 {
			time.Sleep(every)
			publish(ctx, t, kube, warn, time.Now())
		}
		after := get(ctx, t, kube, rep.Name)
		if after.ResourceVersion != before.ResourceVersion {
			t.Errorf("the StorageReport changed (resourceVersion %s → %s) with reports that said nothing new: %s",
				before.ResourceVersion, after.ResourceVersion, cmp.Diff(before.Status, after.Status))
		}
	})

	var last time.Time
	t.Run("a report that stops coming is stale within three of the agent's intervals, naming its time", func(t *testing.T) {
		last = time.Now().Truncate(time.Second)
		publish(ctx, t, kube, warn, last)
		stale := wantWarn
		stale.StaleSince = &metav1.Time{Time: last}
		waitFor(ctx, t, kube, rep.Name, stale)
		if waited := time.Since(last); waited < remotekube.StaleAfter*every {
			t.Errorf("stale %s after its last report, before three of its %s intervals", waited, every)
		}
	})

	t.Run("a report coming again is current", func(t *testing.T) {
		publish(ctx, t, kube, warn, time.Now())
		waitFor(ctx, t, kube, rep.Name, wantWarn)
	})

	t.Run("a changed report is read within seconds", func(t *testing.T) {
		ok := map[string]any{
			"health":   "HEALTH_OK",
			"capacity": warn["capacity"],
			"osds":     map[string]any{"total": int64(30), "up": int64(30), "in": int64(30)},
			"monitors": warn["monitors"],
		}
		publish(ctx, t, kube, ok, time.Now())
		want := wantWarn
		want.Health, want.Checks, want.OSDsUp = "HEALTH_OK", nil, 30
		waitFor(ctx, t, kube, rep.Name, want)
	})

	t.Run("deleting the StorageReport leaves the CephStatus", func(t *testing.T) {
		if err := kube.Delete(ctx, rep); err != nil {
			t.Fatal(err)
		}
		kubetest.Until(t, "the StorageReport gone", patience, func() error {
			if err := kube.Get(ctx, client.ObjectKeyFromObject(rep), &v1alpha1.StorageReport{}); !kerrors.IsNotFound(err) {
				return fmt.Errorf("still there: %v", err)
			}
			return nil
		})
		if err := kube.Get(ctx, client.ObjectKey{Name: DefaultCephStatus}, cephStatus()); err != nil {
			t.Errorf("the CephStatus after deleting the StorageReport: %v", err)
		}
	})
}

func start(t *testing.T) client.Client {
	t.Helper()
	mgr := kubetest.Manager(t, clientgoscheme.AddToScheme, v1alpha1.AddToScheme)
	o := controller.Options{Logger: logging.NewNopLogger(), GlobalRateLimiter: ratelimiter.NewGlobal(10), PollInterval: time.Hour, MaxConcurrentReconciles: 2}
	if err := Setup(mgr, o, remotekube.NewCephStatuses(watch.DefaultClusters, time.Hour)); err != nil {
		t.Fatal(err)
	}
	return kubetest.Start(t, mgr)
}

func cephStatus() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(remotekube.CephStatusGVK)
	return u
}

// publish writes the agent's report at reportedAt, as the storage agent
// does every interval: the CephStatus made when absent, its status
// replaced.
func publish(ctx context.Context, t *testing.T, kube client.Client, report map[string]any, reportedAt time.Time) {
	t.Helper()
	u := cephStatus()
	if err := kube.Get(ctx, client.ObjectKey{Name: DefaultCephStatus}, u); kerrors.IsNotFound(err) {
		u = cephStatus()
		u.SetName(DefaultCephStatus)
		if err := kube.Create(ctx, u); err != nil {
			t.Fatal(err)
		}
	} else if err != nil {
		t.Fatal(err)
	}
	status := map[string]any{"reportedAt": reportedAt.UTC().Format(time.RFC3339), "reportInterval": every.String()}
	for k, v := range report {
		status[k] = v
	}
	u.Object["status"] = status
	if err := kube.Status().Update(ctx, u); err != nil {
		t.Fatal(err)
	}
}

func get(ctx context.Context, t *testing.T, kube client.Client, name string) *v1alpha1.StorageReport {
	t.Helper()
	r := &v1alpha1.StorageReport{}
	if err := kube.Get(ctx, client.ObjectKey{Name: name}, r); err != nil {
		t.Fatal(err)
	}
	return r
}

// waitFor waits until the StorageReport is Ready and observes want.
func waitFor(ctx context.Context, t *testing.T, kube client.Client, name string, want v1alpha1.StorageReportObservation) {
	t.Helper()
	viewtest.UntilObserved(ctx, t, kube, name, patience, func() *v1alpha1.StorageReport { return &v1alpha1.StorageReport{} },
		func(r *v1alpha1.StorageReport) v1alpha1.StorageReportObservation { return r.Status.AtProvider }, want)
}
