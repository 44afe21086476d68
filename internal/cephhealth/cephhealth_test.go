package cephhealth

import "testing"

// TestOf: the checks that block or weaken I/O are read by their codes,
// whatever else the pool reports, and the worst one wins.
func TestOf(t *testing.T) {
	for name, tc := range map[string]struct {
		checks []string
		ok     bool
		reason string
	}{
		"no checks":                    {nil, true, ReasonAvailable},
		"a warning that blocks no I/O": {[]string{"HEALTH_WARN MON_CLOCK_SKEW: clock skew detected"}, true, ReasonAvailable},
		"inactive placement groups":    {[]string{"HEALTH_WARN PG_AVAILABILITY: Reduced data availability: 25 pgs inactive"}, false, ReasonInactive},
		"a full OSD":                   {[]string{"HEALTH_ERR OSD_FULL: 1 full osd(s)"}, false, ReasonFull},
		"a zone down, still serving": {[]string{"HEALTH_WARN OSD_DATACENTER_DOWN: 1 datacenter (2 osds) down", "HEALTH_WARN DEGRADED_STRETCH_MODE: We are missing stretch mode buckets, only requiring 1 of 2 buckets to peer"},
			true, ReasonDegraded},
		"a zone down and nothing active": {[]string{"HEALTH_WARN DEGRADED_STRETCH_MODE: …", "HEALTH_WARN PG_AVAILABILITY: Reduced data availability: 25 pgs inactive, 25 pgs peered"}, false, ReasonInactive},
		"the code alone":                 {[]string{"POOL_FULL"}, false, ReasonFull},
		"a summary naming a code":        {[]string{"HEALTH_WARN PG_DEGRADED: not PG_AVAILABILITY"}, true, ReasonAvailable},
	} {
		t.Run(name, func(t *testing.T) {
			a := Of(tc.checks)
			if a.OK != tc.ok || a.Reason != tc.reason || a.Message == "" {
				t.Errorf("Of(%q) = %+v, want ok %v reason %s", tc.checks, a, tc.ok, tc.reason)
			}
		})
	}
}
