package remotekube

import (
	"context"
	"fmt"
	"reflect"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/c5c3/consumer-plane/provider/internal/clients/watch"
)

// CephStatusGVK is the storage agent's CephStatus (agents/apis/storage),
// read as an unstructured object: the agents are a Go module of their own,
// which depends on this one.
var CephStatusGVK = schema.GroupVersionKind{Group: "storage.c5c3.io", Version: "v1alpha1", Kind: "CephStatus"}

// StaleAfter is how many of its intervals a storage agent may miss before
// its report counts as stale: two are a passing stall (a busy API server, a
// new leader), three an agent that stopped or a cluster that cannot be
// read.
const StaleAfter = 3

// CephStatus holds the fields of a CephStatus the provider reads.
type CephStatus struct {
	metav1.ObjectMeta `json:"metadata"`
	Status            CephStatusStatus `json:"status"`
}

// CephStatusStatus is what the storage agent reports.
type CephStatusStatus struct {
	Health string `json:"health,omitempty"`
	Checks []struct {
		Name     string `json:"name"`
		Severity string `json:"severity"`
		Summary  string `json:"summary,omitempty"`
	} `json:"checks,omitempty"`
	Capacity struct {
		TotalBytes     int64 `json:"totalBytes"`
		UsedBytes      int64 `json:"usedBytes"`
		AvailableBytes int64 `json:"availableBytes"`
	} `json:"capacity"`
	OSDs struct {
		Total int32 `json:"total"`
		Up    int32 `json:"up"`
		In    int32 `json:"in"`
	} `json:"osds"`
	Monitors struct {
		Total    int32 `json:"total"`
		InQuorum int32 `json:"inQuorum"`
	} `json:"monitors"`
	ReportedAt     *metav1.Time     `json:"reportedAt,omitempty"`
	ReportInterval *metav1.Duration `json:"reportInterval,omitempty"`
}

// StaleIn says how long the report stays current: until StaleAfter of the
// agent's intervals have passed since it was published. Zero or less: it is
// stale now. A report without a time or an interval never goes stale.
func (s CephStatusStatus) StaleIn(now time.Time) (time.Duration, bool) {
	if s.ReportedAt == nil || s.ReportInterval == nil || s.ReportInterval.Duration <= 0 {
		return 0, false
	}
	return s.ReportedAt.Add(StaleAfter * s.ReportInterval.Duration).Sub(now), true
}

// NewCephStatuses returns an empty set of at most size watched views of
// pool clusters' CephStatuses. Views unused for idle are stopped.
//
// The agent publishes its report every interval whether or not anything
// changed (its time tells a reader the agent still runs). Such an update is
// no news to the StorageReports, which keep the report without its time:
// only an update that changes the report, or one that comes after the last
// report had gone stale, requests their observation. A report that stops
// coming is noticed by the StorageReport's own next look, at the moment it
// goes stale.
func NewCephStatuses(size int, idle time.Duration) *watch.Clusters {
	return watch.NewClusters(watch.Kind{
		New:        watch.Unstructured(CephStatusGVK),
		Cluster:    "the storage pool's cluster",
		Objects:    "CephStatuses (storage.c5c3.io/v1alpha1)",
		Permission: "get, list and watch on cephstatuses.storage.c5c3.io",
		Changed:    CephStatusChanged,
	}, size, idle)
}

// CephStatusChanged says whether an update of a CephStatus is news: its
// report changed, or it came after the last report had gone stale.
func CephStatusChanged(old, updated any) bool {
	o, err1 := cephStatusOf(old)
	u, err2 := cephStatusOf(updated)
	if err1 != nil || err2 != nil {
		return true
	}
	if o.ReportedAt != nil && u.ReportedAt != nil {
		if left, ok := o.StaleIn(u.ReportedAt.Time); ok && left <= 0 {
			return true
		}
	}
	o.ReportedAt, u.ReportedAt = nil, nil
	return !reflect.DeepEqual(o, u)
}

func cephStatusOf(obj any) (CephStatusStatus, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return CephStatusStatus{}, fmt.Errorf("%T is not an unstructured CephStatus", obj)
	}
	s := CephStatus{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &s); err != nil {
		return CephStatusStatus{}, err
	}
	return s.Status, nil
}

// ReadCephStatus reads the named CephStatus from the watch cache (no
// request reaches the pool cluster); nil when the agent has not published
// it.
func ReadCephStatus(ctx context.Context, c *watch.Cluster, name string) (*CephStatus, error) {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(CephStatusGVK.GroupVersion().WithKind(CephStatusGVK.Kind + "List"))
	if err := c.List(ctx, l); err != nil {
		return nil, fmt.Errorf("cannot read CephStatus %s: %w", name, err)
	}
	for i := range l.Items {
		if l.Items[i].GetName() != name {
			continue
		}
		s := &CephStatus{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(l.Items[i].Object, s); err != nil {
			return nil, fmt.Errorf("cannot read CephStatus %s: %w", name, err)
		}
		return s, nil
	}
	return nil, nil //nolint:nilnil // not published yet, which the caller reports.
}
