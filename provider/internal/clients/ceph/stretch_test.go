package ceph

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseLocation(t *testing.T) {
	for in, want := range map[string]map[string]string{
		"{}":                     {},
		"":                       {},
		"{zone=zone1}":           {"zone": "zone1"},
		"{host=h1,zone=zone1}":   {"host": "h1", "zone": "zone1"},
		"{host=h1, zone=zone1}":  {"host": "h1", "zone": "zone1"},
		"{datacenter=arbiter-1}": {"datacenter": "arbiter-1"},
	} {
		if diff := cmp.Diff(want, parseLocation(in)); diff != "" {
			t.Errorf("parseLocation(%q): -want +got\n%s", in, diff)
		}
	}
}

func TestPlanStretch(t *testing.T) {
	// Rook's pool cluster over eu-de-1a and eu-de-1b: a monitor on a node
	// of each zone, the arbiter's on a node of another cluster.
	zones := Zones{
		HostZone: map[string]string{"n1": "eu-de-1a", "n2": "eu-de-1a", "n3": "eu-de-1b", "n4": "eu-de-1b"},
		Weight:   map[string]float64{"eu-de-1a": 2, "eu-de-1b": 2},
	}
	cases := map[string]struct {
		mons    map[string]string
		zones   Zones
		want    StretchPlan
		wantErr string
	}{
		"two zones and the arbiter": {
			mons:  map[string]string{"a": "n1", "b": "n3", "arbiter": "cp-node-7"},
			zones: zones,
			want: StretchPlan{Zones: []string{"eu-de-1a", "eu-de-1b"}, Tiebreaker: "arbiter",
				Locations: map[string]string{"a": "eu-de-1a", "b": "eu-de-1b", "arbiter": "arbiter"}},
		},
		"the arbiter has not joined": {
			mons:    map[string]string{"a": "n1", "b": "n3"},
			zones:   zones,
			wantErr: "no tiebreaker monitor yet: every monitor runs on a host of a zone (a (on n1) in eu-de-1a, b (on n3) in eu-de-1b); the arbiter's monitor has not joined",
		},
		"two monitors outside the zones": {
			mons:    map[string]string{"a": "n1", "b": "n3", "c": "x", "d": "y"},
			zones:   zones,
			wantErr: "monitors c (on x), d (on y) run on no host of a zone: only one may, the tiebreaker",
		},
		"monitors in one zone only": {
			mons:    map[string]string{"a": "n1", "b": "n2", "arbiter": "x"},
			zones:   zones,
			wantErr: "stretch mode needs monitors in exactly 2 zones besides the tiebreaker; they are in 1: a (on n1) in eu-de-1a, b (on n2) in eu-de-1a",
		},
		"a third zone of OSDs": {
			mons: map[string]string{"a": "n1", "b": "n3", "arbiter": "x"},
			zones: Zones{HostZone: zones.HostZone,
				Weight: map[string]float64{"eu-de-1a": 2, "eu-de-1b": 2, "eu-de-1c": 1}},
			wantErr: "stretch mode needs exactly 2 zones in the CRUSH map; it has 3: eu-de-1a, eu-de-1b, eu-de-1c",
		},
		"zones of different weights": {
			mons: map[string]string{"a": "n1", "b": "n3", "arbiter": "x"},
			zones: Zones{HostZone: zones.HostZone,
				Weight: map[string]float64{"eu-de-1a": 2, "eu-de-1b": 1}},
			wantErr: "stretch mode needs both zones' OSDs up with the same CRUSH weight: eu-de-1a weighs 2, eu-de-1b 1",
		},
		"the single-host local Ceph": {
			mons:    map[string]string{"a": "localhost"},
			zones:   Zones{HostZone: map[string]string{}, Weight: map[string]float64{}},
			wantErr: "stretch mode needs monitors in exactly 2 zones besides the tiebreaker; they are in 0: none",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := PlanStretch(tc.mons, tc.zones, "arbiter")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("PlanStretch: want error containing %q, got %v (plan %+v)", tc.wantErr, err, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("PlanStretch: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("PlanStretch: -want +got\n%s", diff)
			}
		})
	}
}
