package ovs

import (
	"slices"
	"testing"
)

func TestWithZones(t *testing.T) {
	for _, tc := range []struct {
		opts  string
		zones []string
		want  string
	}{
		{"", []string{"az1"}, "availability-zones=az1"},
		{"enable-chassis-as-gw", []string{"az1", "az2"}, "enable-chassis-as-gw,availability-zones=az1:az2"},
		{"availability-zones=old,enable-chassis-as-gw", []string{"new"}, "enable-chassis-as-gw,availability-zones=new"},
		{"enable-chassis-as-gw, availability-zones=old", nil, "enable-chassis-as-gw"},
	} {
		if got := withZones(tc.opts, tc.zones); got != tc.want {
			t.Errorf("withZones(%q, %v) = %q, want %q", tc.opts, tc.zones, got, tc.want)
		}
		if got := zonesIn(withZones(tc.opts, tc.zones)); !slices.Equal(got, tc.zones) {
			t.Errorf("zonesIn(withZones(%q, %v)) = %v", tc.opts, tc.zones, got)
		}
	}
}
