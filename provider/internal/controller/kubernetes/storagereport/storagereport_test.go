package storagereport

import (
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/c5c3/consumer-plane/apis/kubernetes/v1alpha1"
	"github.com/c5c3/consumer-plane/provider/internal/clients/remotekube"
)

func TestObservation(t *testing.T) {
	reported := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	s := remotekube.CephStatusStatus{Health: "HEALTH_OK", ReportedAt: &metav1.Time{Time: reported}, ReportInterval: &metav1.Duration{Duration: 30 * time.Second}}
	if o := Observation(s, reported.Add(89*time.Second)); o.StaleSince != nil || o.Health != "HEALTH_OK" {
		t.Errorf("89 s after a report every 30 s: %+v, want current", o)
	}
	if o := Observation(s, reported.Add(91*time.Second)); o.StaleSince == nil || !o.StaleSince.Time.Equal(reported) {
		t.Errorf("91 s after a report every 30 s: staleSince %v, want %s", o.StaleSince, reported)
	}
}

func TestHook(t *testing.T) {
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	s := &staleAt{}
	next := func(resource.Managed, time.Duration) time.Duration { return time.Minute }
	hook := s.Hook(next, func() time.Time { return now })
	mg := &v1alpha1.StorageReport{ObjectMeta: metav1.ObjectMeta{Name: "r"}}
	if d := hook(mg, time.Minute); d != time.Minute {
		t.Errorf("no report held: %s, want the poll's minute", d)
	}
	s.set("r", now.Add(20*time.Second))
	if d := hook(mg, time.Minute); d != 21*time.Second {
		t.Errorf("a report stale in 20 s: %s, want 21s", d)
	}
	s.set("r", now.Add(5*time.Minute))
	if d := hook(mg, time.Minute); d != time.Minute {
		t.Errorf("a report stale in 5 min: %s, want the poll's minute", d)
	}
	s.set("r", now.Add(-time.Minute))
	if d := hook(mg, time.Minute); d != time.Minute {
		t.Errorf("a report stale already (looked at): %s, want the poll's minute", d)
	}
}
