package ceph

import (
	"context"
	"strings"
	"testing"

	"github.com/c5c3/consumer-plane/internal/cephplacement"
)

// The storage pool's status (cephplacement, in the functions) names the
// rule this package makes for a stretched pool's tenant pools; the two
// names are written twice, because the functions may not import the
// provider. They must not drift, whatever the device class (which the
// rule does not take).
func TestStretchRuleNameMatchesThePlacementsName(t *testing.T) {
	for _, class := range []string{"", "nvme", "hdd"} {
		// The cloud's function asks for root default and the placement's
		// failure domain (functions/openstackcluster: Pool spec.forProvider.stretch).
		r := StretchRule{Root: "default", ZoneType: cephplacement.DomainZone, Class: class}
		p := cephplacement.Placement{Stretched: true, FailureDomain: cephplacement.DomainZone}
		if r.Name() != p.CrushRule() {
			t.Errorf("class %q: the provider makes %q, the status names %q", class, r.Name(), p.CrushRule())
		}
	}
}

// The stretch rule takes the root itself whatever the class: a take of a
// class's shadow tree leaves every PG peered once a zone is lost (see
// StretchRule).
func TestStretchRuleTakesTheRoot(t *testing.T) {
	for _, class := range []string{"", "nvme"} {
		got := StretchRule{Root: "default", ZoneType: "zone", Class: class}.text(3, false)
		want := "rule stretch_zone {\n\tid 3\n\ttype replicated\n\tstep take default\n\tstep choose firstn 0 type zone\n\tstep chooseleaf firstn 2 type host\n\tstep emit\n}\n"
		if got != want {
			t.Errorf("class %q: the rule is\n%s\nwant\n%s", class, got, want)
		}
	}
	if got := (StretchRule{Root: "dc", ZoneType: "datacenter", Class: "ssd"}).Name(); got != "stretch_dc_datacenter" {
		t.Errorf("under root dc by datacenter: %s, want stretch_dc_datacenter", got)
	}
}

// The class is a condition on the OSDs under the root, checked before any
// rule is made: an OSD of another class under it, or of none, refuses it,
// naming the OSD; one outside the root does not count.
func TestStretchRuleChecksTheClassOfEveryOSDUnderTheRoot(t *testing.T) {
	// root default > zone a > host h1 > osd.0 (nvme), osd.1 (hdd); root
	// other > osd.2 (hdd).
	tree := `{"nodes": [
	  {"id": -1, "name": "default", "type": "root", "children": [-2]},
	  {"id": -2, "name": "a", "type": "zone", "children": [-3]},
	  {"id": -3, "name": "h1", "type": "host", "children": [0, 1]},
	  {"id": 0, "name": "osd.0", "type": "osd", "device_class": "nvme"},
	  {"id": 1, "name": "osd.1", "type": "osd", "device_class": "%s"},
	  {"id": -4, "name": "other", "type": "root", "children": [2]},
	  {"id": 2, "name": "osd.2", "type": "osd", "device_class": "hdd"}]}`
	for _, tc := range []struct {
		osd1, class, wantErr string
	}{
		{osd1: "nvme", class: "nvme"},
		{osd1: "hdd", class: ""},
		{osd1: "hdd", class: "nvme", wantErr: `a stretched pool on device class "nvme" needs every OSD under CRUSH root default of that class, and osd.1 is "hdd": rule stretch_zone takes every OSD`},
		{osd1: "", class: "nvme", wantErr: `osd.1 is ""`},
		{osd1: "nvme", class: "ssd", wantErr: `osd.0 is "nvme", osd.1 is "nvme"`},
	} {
		f := &fakeConn{out: strings.Replace(tree, "%s", tc.osd1, 1)}
		err := (&Client{Conn: f}).checkStretchClass(context.Background(), StretchRule{Root: "default", ZoneType: "zone", Class: tc.class})
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("osd.1 %q, class %q: %v, want no error", tc.osd1, tc.class, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("osd.1 %q, class %q: %v, want an error containing %q", tc.osd1, tc.class, err, tc.wantErr)
		case tc.class == "" && len(f.sent) != 0:
			t.Errorf("no class: sent %v, want nothing", f.sent)
		}
	}
}
