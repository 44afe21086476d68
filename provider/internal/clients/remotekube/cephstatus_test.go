package remotekube

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func report(health, reportedAt string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{
		"health": health, "reportInterval": "30s", "reportedAt": reportedAt,
		"osds": map[string]any{"total": int64(3), "up": int64(3), "in": int64(3)},
	}}}
	u.SetGroupVersionKind(CephStatusGVK)
	u.SetName("ceph")
	return u
}

func TestCephStatusChanged(t *testing.T) {
	cases := map[string]struct {
		old, updated any
		want         bool
	}{
		"a heartbeat: only its time is new":           {report("HEALTH_OK", "2026-11-30T10:00:00Z"), report("HEALTH_OK", "2026-11-30T10:00:30Z"), false},
		"a heartbeat late but within three intervals": {report("HEALTH_OK", "2026-11-30T10:00:00Z"), report("HEALTH_OK", "2026-11-30T10:01:29Z"), false},
		"a report after the last had gone stale":      {report("HEALTH_OK", "2026-11-30T10:00:00Z"), report("HEALTH_OK", "2026-11-30T10:01:31Z"), true},
		"a changed report":                            {report("HEALTH_OK", "2026-11-30T10:00:00Z"), report("HEALTH_WARN", "2026-11-30T10:00:30Z"), true},
		"a changed report at the same time":           {report("HEALTH_OK", "2026-11-30T10:00:00Z"), report("HEALTH_WARN", "2026-11-30T10:00:00Z"), true},
		"not a CephStatus":                            {"x", report("HEALTH_OK", "2026-11-30T10:00:00Z"), true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := CephStatusChanged(tc.old, tc.updated); got != tc.want {
				t.Errorf("CephStatusChanged: %t, want %t", got, tc.want)
			}
		})
	}
}

func TestStaleIn(t *testing.T) {
	u := report("HEALTH_OK", "2026-11-30T10:00:00Z")
	s, err := cephStatusOf(u)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 30, 10, 1, 0, 0, time.UTC)
	if in, ok := s.StaleIn(at); !ok || in != 30*time.Second {
		t.Errorf("StaleIn a minute after a report every 30s: %s %t, want 30s true", in, ok)
	}
	if in, ok := s.StaleIn(at.Add(time.Minute)); !ok || in > 0 {
		t.Errorf("StaleIn two minutes after: %s %t, want stale", in, ok)
	}
	s.ReportInterval = nil
	if _, ok := s.StaleIn(at); ok {
		t.Errorf("a report without an interval goes stale")
	}
}
