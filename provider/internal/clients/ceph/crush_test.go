package ceph

import (
	"testing"

	"github.com/c5c3/consumer-plane/internal/cephplacement"
)

// The storage pool's status (cephplacement, in the functions) names the
// rule this package makes for a stretched pool's tenant pools; the two
// names are written twice, because the functions may not import the
// provider. They must not drift.
func TestStretchRuleNameMatchesThePlacementsName(t *testing.T) {
	for _, class := range []string{"", "nvme", "hdd"} {
		// The cloud's function asks for root default and the placement's
		// failure domain (functions/openstackcluster: Pool spec.forProvider.stretch).
		r := StretchRule{Root: "default", ZoneType: cephplacement.DomainZone, Class: class}
		p := cephplacement.Placement{Stretched: true, FailureDomain: cephplacement.DomainZone, DeviceClass: class}
		if r.Name() != p.CrushRule() {
			t.Errorf("class %q: the provider makes %q, the status names %q", class, r.Name(), p.CrushRule())
		}
	}
}
