package chassisset

import (
	"slices"
	"testing"

	"github.com/c5c3/consumer-plane/provider/internal/clients/ovn/sbdb"
)

func TestZones(t *testing.T) {
	cases := map[string]struct {
		c       sbdb.Chassis
		zones   []string
		gateway bool
	}{
		"other_config":       {sbdb.Chassis{OtherConfig: map[string]string{"ovn-cms-options": "enable-chassis-as-gw,availability-zones=az-a:az-b"}}, []string{"az-a", "az-b"}, true},
		"external_ids (old)": {sbdb.Chassis{ExternalIDs: map[string]string{"ovn-cms-options": "availability-zones=az-c"}}, []string{"az-c"}, false},
		"none":               {sbdb.Chassis{}, nil, false},
		"gateway only":       {sbdb.Chassis{OtherConfig: map[string]string{"ovn-cms-options": "enable-chassis-as-gw"}}, nil, true},
	}
	for name, tc := range cases {
		if got := Zones(tc.c); !slices.Equal(got, tc.zones) {
			t.Errorf("%s: zones %v, want %v", name, got, tc.zones)
		}
		if got := gateway(tc.c); got != tc.gateway {
			t.Errorf("%s: gateway %v", name, got)
		}
	}
}
