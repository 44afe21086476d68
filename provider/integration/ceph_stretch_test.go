//go:build ceph

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/consumer-plane/apis/ceph/v1alpha1"
)

// crushRule is one rule of `ceph osd crush rule dump`.
type crushRule struct {
	ID    int    `json:"rule_id"`
	Name  string `json:"rule_name"`
	Steps []struct {
		Op       string `json:"op"`
		Num      int    `json:"num"`
		Type     string `json:"type"`
		ItemName string `json:"item_name"`
	} `json:"steps"`
}

func (r crushRule) String() string {
	var s []string
	for _, st := range r.Steps {
		switch st.Op {
		case "take":
			s = append(s, "take "+st.ItemName)
		case "emit":
			s = append(s, "emit")
		default:
			b, _ := json.Marshal(st.Num) //nolint:errcheck // an int
			s = append(s, st.Op+" "+string(b)+" "+st.Type)
		}
	}
	return strings.Join(s, "; ")
}

// TestIntegrationCephStretchedPool: a stretched pool (#42) keeps two
// replicas in each of two zones. Two zone buckets are added to the local
// single-OSD cluster's CRUSH map, with no OSDs in them; the provider makes
// the two-step rule with crushtool, taking the root and not the device
// class (which stretch mode cannot serve with a zone lost: a pool on the
// class its OSDs have takes the same rule), and the pools take it with
// size 4 and min_size 2 from their creation, as Ceph and the pools' status
// both say. (Their placement groups cannot map
// to OSDs here, so what they hold cannot be listed and they are not Ready:
// the status still says where their data is, and dataPolicy Delete lets
// them go.) A stretched pool of size 3 is refused by the API server, and a
// root CRUSH does not have by the provider, naming it.
func TestIntegrationCephStretchedPool(t *testing.T) {
	h, pc := withCeph(t)
	zones := []string{h.name("zone-a"), h.name("zone-b")}
	for _, z := range zones {
		mustCeph(t, "osd", "crush", "add-bucket", z, "zone")
		t.Cleanup(func() { _, _ = cephCLI("osd", "crush", "rm", z) }) //nolint:errcheck // best effort
		mustCeph(t, "osd", "crush", "move", z, "root=default")
	}
	t.Cleanup(func() { _, _ = cephCLI("osd", "crush", "rule", "rm", "stretch_zone") }) //nolint:errcheck // best effort; after the pools (cleanups run last first)

	stretched := func(base, class string) *v1alpha1.Pool {
		name := h.name(base)
		return &v1alpha1.Pool{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.PoolSpec{ClusterManagedResourceSpec: managedBy(pc),
			ForProvider: v1alpha1.PoolParameters{Name: name, Size: 4, MinSize: new(int32(2)), DeviceClass: class, Stretch: &v1alpha1.Stretch{},
				DataPolicy: v1alpha1.DataPolicyDelete}}}
	}
	plain, hdd := stretched("stretched", ""), stretched("stretched-hdd", "hdd")
	for _, p := range []*v1alpha1.Pool{plain, hdd} {
		// Run before the rules' cleanup: a pool a failed run left behind
		// would hold its rule.
		t.Cleanup(func() {
			_, _ = cephCLI("osd", "pool", "delete", p.Name, p.Name, "--yes-i-really-really-mean-it") //nolint:errcheck // best effort; gone when the test passed
		})
		h.create(t, p)
	}
	for _, tc := range []struct {
		pool       *v1alpha1.Pool
		rule, take string
	}{{plain, "stretch_zone", "default"}, {hdd, "stretch_zone", "default"}} {
		var r crushRule
		eventually(t, "CRUSH rule "+tc.rule, func() (bool, string) {
			out, err := cephCLI("osd", "crush", "rule", "dump", tc.rule, "-f", "json")
			if err != nil {
				// What the pool waits on, said by the provider.
				c, gerr := h.condition(t, tc.pool, xpv2.TypeSynced)
				return false, fmt.Sprintf("%v; %s: Synced=%s %s (%v)", err, tc.pool.Name, c.Status, c.Message, gerr)
			}
			return json.Unmarshal([]byte(out), &r) == nil, out
		})
		if want := "take " + tc.take + "; choose_firstn 0 zone; chooseleaf_firstn 2 host; emit"; r.String() != want {
			t.Errorf("rule %s: %s, want %s", tc.rule, r, want)
		}
		eventually(t, tc.pool.Name+" in Ceph: the rule, size 4, min_size 2", func() (bool, string) {
			got := cephPool(t, tc.pool.Spec.ForProvider.Name)
			ok := got != nil && int(got["crush_rule"].(float64)) == r.ID && got["size"].(float64) == 4 && got["min_size"].(float64) == 2
			return ok, "crush_rule, size, min_size: " + strings.Join([]string{jsonOf(got["crush_rule"]), jsonOf(got["size"]), jsonOf(got["min_size"])}, ", ")
		})
		eventually(t, tc.pool.Name+"'s status reports its placement", func() (bool, string) {
			if err := h.kube.Get(context.Background(), client.ObjectKeyFromObject(tc.pool), tc.pool); err != nil {
				return false, err.Error()
			}
			a := tc.pool.Status.AtProvider
			return a.CrushRule == tc.rule && a.Size == 4 && a.MinSize == 2, jsonOf(a)
		})
	}

	// Bad input: a stretched pool of 3 replicas cannot keep 2 in each zone.
	bad := stretched("stretched-3", "")
	bad.Spec.ForProvider.Size = 3
	if err := h.kube.Create(context.Background(), bad); err == nil || !strings.Contains(err.Error(), "spec.forProvider.size must be 4") {
		t.Errorf("a stretched pool of size 3: %v, want refused naming spec.forProvider.size", err)
	}
	// A root the CRUSH map does not have: refused by crushtool, said on
	// the resource; no pool is made.
	noRoot := stretched("stretched-noroot", "")
	noRoot.Spec.ForProvider.Stretch.Root = h.name("no-such-root")
	h.create(t, noRoot)
	h.waitSyncError(t, noRoot, "CRUSH rule stretch_"+noRoot.Spec.ForProvider.Stretch.Root+"_zone", "cannot be made")
	if cephPool(t, noRoot.Spec.ForProvider.Name) != nil {
		t.Errorf("pool %s was made without its rule", noRoot.Spec.ForProvider.Name)
	}
	// A device class the OSDs under the root do not have: refused, naming
	// the class and the OSDs.
	noClass := stretched("stretched-noclass", "nvme-absent")
	h.create(t, noClass)
	h.waitSyncError(t, noClass, `a stretched pool on device class "nvme-absent" needs every OSD under CRUSH root default of that class, and osd.0 is "hdd"`)
	for _, p := range []*v1alpha1.Pool{plain, hdd, noRoot, noClass} {
		h.delete(t, p)
	}
	for _, p := range []*v1alpha1.Pool{plain, hdd, noRoot, noClass} {
		h.waitGone(t, p)
	}
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v) //nolint:errcheck // test output
	return string(b)
}
