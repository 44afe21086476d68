// Package storagereport reads what a storage pool's agent publishes in the
// pool's cluster: its CephStatus.
//
// A StorageReport writes nothing: Observe copies the watched CephStatus's
// report, without the time it was published, and always reports the
// "external resource" as existing and up to date. The agent publishes every
// interval whether or not anything changed; a StorageReport that copied
// that time would change at every report, and with it the pool's composite,
// which Crossplane then reconciles, applying each of its composed resources
// again (every 15 s per storage pool in the demo: most of what the idle
// management kube-apiserver did, stop 75). Instead the StorageReport is
// observed again when the report changes (the watch passes only those
// updates, remotekube.CephStatusChanged) and when the report it holds would
// go stale, and says so then (atProvider.staleSince).
package storagereport

import (
	"context"
	"sync"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/c5c3/consumer-plane/apis/kubernetes/v1alpha1"
	"github.com/c5c3/consumer-plane/provider/internal/clients/remotekube"
	"github.com/c5c3/consumer-plane/provider/internal/clients/watch"
	pcontroller "github.com/c5c3/consumer-plane/provider/internal/controller"
	"github.com/c5c3/consumer-plane/provider/internal/controller/kubernetes"
	"github.com/c5c3/consumer-plane/provider/internal/controller/providerconfig"
)

// DefaultCephStatus is the CephStatus the storage agent publishes unless
// its --name says otherwise (cluster/agents/storage-agent.yaml).
const DefaultCephStatus = "ceph"

// maxChecks bounds the health checks a status lists (the CRD's MaxItems).
const maxChecks = 64

// Setup adds the StorageReport controller. Every change of a watched
// CephStatus that is news requests an observation of the StorageReports of
// its ProviderConfig; each StorageReport is also observed when the report
// it holds would go stale.
func Setup(mgr ctrl.Manager, o controller.Options, clusters *watch.Clusters) error {
	stale := &staleAt{}
	c := providerconfig.ClusterView(mgr, clusters, kubernetes.NewProviderConfig, func(cl *watch.Cluster) managed.TypedExternalClient[*v1alpha1.StorageReport] {
		return &external{cluster: cl, stale: stale, now: time.Now}
	})
	changed := watch.Source(mgr.GetClient(), clusters, func() resource.ManagedList { return &v1alpha1.StorageReportList{} })
	return pcontroller.SetupManagedWatching(mgr, o, v1alpha1.SchemeGroupVersion.WithKind(v1alpha1.StorageReportKind), &v1alpha1.StorageReportList{},
		changed, managed.WithTypedExternalConnector[*v1alpha1.StorageReport](c),
		// Given after setupManaged's own hook, so it replaces it; it calls
		// that hook (PollWhileWaiting) for everything but staleness.
		managed.WithPollIntervalHook(stale.Hook(pcontroller.PollWhileWaiting(time.Now), time.Now)))
}

// staleAt keeps, per StorageReport, when the report it holds goes stale
// unless a newer one comes. In memory only: a restarted provider observes
// every StorageReport again anyway.
type staleAt struct{ m sync.Map }

func (s *staleAt) set(name string, at time.Time) { s.m.Store(name, at) }
func (s *staleAt) forget(name string)            { s.m.Delete(name) }

// Hook is next, except that a StorageReport is looked at again a second
// after its report would go stale, when that is sooner: no update of the
// CephStatus wakes it for a report that does not come.
func (s *staleAt) Hook(next managed.PollIntervalHook, now func() time.Time) managed.PollIntervalHook {
	return func(mg resource.Managed, poll time.Duration) time.Duration {
		d := next(mg, poll)
		at, ok := s.m.Load(mg.GetName())
		if !ok {
			return d
		}
		if until := at.(time.Time).Sub(now()) + time.Second; until > 0 && until < d { //nolint:forcetypeassert // only set stores.
			return until
		}
		return d
	}
}

// external observes the CephStatus; the report is a view and writes
// nothing.
type external struct {
	pcontroller.View[*v1alpha1.StorageReport]
	cluster *watch.Cluster
	stale   *staleAt
	now     func() time.Time
}

func (e *external) Observe(ctx context.Context, mg *v1alpha1.StorageReport) (managed.ExternalObservation, error) {
	if meta.WasDeleted(mg) {
		// Nothing to delete: report the view gone so the finalizer goes.
		e.stale.forget(mg.GetName())
		return managed.ExternalObservation{}, nil
	}
	name := mg.Spec.ForProvider.CephStatus
	if name == "" {
		name = DefaultCephStatus
	}
	// A cluster that cannot be read fails here, and the report kept is the
	// last one read (Synced False says why).
	s, err := remotekube.ReadCephStatus(ctx, e.cluster, name)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	now := e.now()
	mg.Status.AtProvider = v1alpha1.StorageReportObservation{}
	e.stale.forget(mg.GetName())
	if s != nil {
		mg.Status.AtProvider = Observation(s.Status, now)
		if in, ok := s.Status.StaleIn(now); ok && in > 0 {
			e.stale.set(mg.GetName(), now.Add(in))
		}
	}
	mg.SetConditions(xpv2.Available())
	return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
}

// Observation is the report without the time it was published, and that
// time as staleSince once the report is stale at now.
func Observation(s remotekube.CephStatusStatus, now time.Time) v1alpha1.StorageReportObservation {
	o := v1alpha1.StorageReportObservation{
		Health:     s.Health,
		TotalBytes: s.Capacity.TotalBytes, UsedBytes: s.Capacity.UsedBytes, AvailableBytes: s.Capacity.AvailableBytes,
		OSDs: s.OSDs.Total, OSDsUp: s.OSDs.Up, OSDsIn: s.OSDs.In,
		Monitors: s.Monitors.Total, MonitorsInQuorum: s.Monitors.InQuorum,
		ReportInterval: s.ReportInterval,
	}
	for _, c := range s.Checks {
		if len(o.Checks) == maxChecks {
			break
		}
		o.Checks = append(o.Checks, v1alpha1.StorageHealthCheck{Name: c.Name, Severity: c.Severity, Summary: c.Summary})
	}
	if in, ok := s.StaleIn(now); ok && in <= 0 {
		o.StaleSince = &metav1.Time{Time: s.ReportedAt.Time}
	}
	return o
}
