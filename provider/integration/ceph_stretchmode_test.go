//go:build ceph

package integration

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/consumer-plane/apis/ceph/v1alpha1"
	"github.com/c5c3/consumer-plane/provider/internal/controller/ceph/stretchmode"
)

// stretchedCeph starts, for one test, a Ceph laid out as Rook lays out a
// stretched pool cluster (local/ceph/start.sh): monitors a and b on a node
// of zone eu-de-1a and of eu-de-1b, the arbiter's monitor c on a node of
// another cluster, and two nodes of one nvme OSD in each zone, on ports
// beside the demo's stretched Ceph (local/demo/up.sh). It returns its run
// directory and a ProviderConfig for it.
func stretchedCeph(t *testing.T, h *harness) (string, string) {
	t.Helper()
	if _, err := exec.LookPath("ceph-mon"); err != nil {
		msg := "needs Ceph's daemons: run `make ceph-up` (local/ceph/install.sh as root)"
		if os.Getenv("REQUIRE_INTEGRATION") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	dir, err := os.MkdirTemp("", "stretched-ceph-")
	if err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs("../../local/ceph/start.sh")
	if err != nil {
		t.Fatal(err)
	}
	stop := func() {
		cmd := exec.Command(filepath.Join(filepath.Dir(script), "stop.sh"))
		cmd.Env = append(os.Environ(), "COBALTCORE_CEPH_RUN="+dir)
		_ = cmd.Run() //nolint:errcheck // best effort
		_ = os.RemoveAll(dir)
	}
	t.Cleanup(stop)
	cmd := exec.Command(script)
	cmd.Env = append(os.Environ(), "COBALTCORE_CEPH_RUN="+dir,
		"CEPH_MONS=a=node-1a-1 b=node-1b-1 c=cp-eu-de-1-node",
		"CEPH_MON_PORT=3411", "CEPH_MON_V1_PORT=6911",
		"CEPH_OSD_HOSTS=eu-de-1a/node-1a-1 eu-de-1a/node-1a-2 eu-de-1b/node-1b-1 eu-de-1b/node-1b-2",
		"CEPH_DEVICE_CLASS=nvme", "OSD_BYTES=268435456")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("local/ceph/start.sh (stretched): %v\n%s", err, out)
	}
	key, err := os.ReadFile(filepath.Join(dir, "admin.key"))
	if err != nil {
		t.Fatal(err)
	}
	pc := h.name("ceph-stretched")
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: pc, Namespace: "crossplane-system"},
		StringData: map[string]string{"key": strings.TrimSpace(string(key))}}
	h.create(t, sec)
	h.create(t, &v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: pc}, Spec: v1alpha1.ProviderConfigSpec{
		// Rook's endpoints, as the pool's rook-ceph-mon-endpoints name them.
		MonHosts: []string{"a=127.0.0.1:6911", "b=127.0.0.1:6912", "c=127.0.0.1:6913"}, User: "admin",
		Credentials: v1alpha1.CephCredentials{Source: xpv2.CredentialsSourceSecret, CommonCredentialSelectors: xpv2.CommonCredentialSelectors{
			SecretRef: &xpv2.SecretKeySelector{SecretReference: xpv2.SecretReference{Namespace: sec.Namespace, Name: sec.Name}, Key: "key"}}}}})
	return dir, pc
}

// monDump is what `ceph mon dump` says of stretch mode.
type monDump struct {
	Stretch    bool   `json:"stretch_mode"`
	Tiebreaker string `json:"tiebreaker_mon"`
	Strategy   int    `json:"election_strategy"`
	Mons       []struct {
		Name     string `json:"name"`
		Location string `json:"crush_location"`
	} `json:"mons"`
}

func monDumpAt(t *testing.T, dir string) monDump {
	t.Helper()
	var d monDump
	cephJSONAt(t, dir, &d, "mon", "dump")
	return d
}

// TestIntegrationCephStretchMode: a stretched pool's Ceph gets Ceph's
// stretch mode (#42), its monitors' zones read from Ceph alone.
//
//   - On the single-host local Ceph, which has no zones, a StretchMode
//     waits, Ready False saying what the cluster lacks, and the monitors
//     are left as they were.
//   - On a Ceph laid out as a stretched pool's, the monitors a and b are
//     located in the zones of their nodes, c (on a node of no zone, the
//     arbiter's) is the tiebreaker, and stretch mode is on: every pool is
//     placed by stretch_zone_nvme, with size 4 and min_size 2 (one made
//     before by Ceph's default rule too), and a stretched Pool made after
//     it gets what it asked for and is Ready.
//   - Deleting the StretchMode leaves Ceph in stretch mode, and needs no
//     access to it (its credentials deleted first).
func TestIntegrationCephStretchMode(t *testing.T) {
	h, localPC := withCeph(t)
	ctx := context.Background()
	stretch := func(base, pc, class string) *v1alpha1.StretchMode {
		return &v1alpha1.StretchMode{ObjectMeta: metav1.ObjectMeta{Name: h.name(base)}, Spec: v1alpha1.StretchModeSpec{
			ClusterManagedResourceSpec: managedBy(pc),
			ForProvider:                v1alpha1.StretchModeParameters{Root: "default", ZoneType: "zone", DeviceClass: class, TiebreakerZone: "arbiter"}}}
	}

	// The local Ceph cannot take it: it waits, and nothing changes.
	before := monDumpAt(t, cephRun())
	waiting := stretch("stretch-local", localPC, "")
	h.create(t, waiting)
	eventually(t, "the StretchMode on the local Ceph waits, saying why", func() (bool, string) {
		c, err := h.condition(t, waiting, xpv2.TypeReady)
		if err != nil {
			return false, err.Error()
		}
		return c.Status == corev1.ConditionFalse && c.Reason == stretchmode.ReasonWaitingForCluster &&
			strings.Contains(c.Message, "stretch mode needs monitors in exactly 2 zones besides the tiebreaker; they are in 0"), jsonOf(c)
	})
	if after := monDumpAt(t, cephRun()); after.Stretch || after.Strategy != before.Strategy || fmt.Sprint(after.Mons) != fmt.Sprint(before.Mons) {
		t.Errorf("the local Ceph's monitors changed while the StretchMode waited: %+v, were %+v", after, before)
	}
	h.delete(t, waiting)
	h.waitGone(t, waiting)

	// A stretched pool's Ceph takes it.
	dir, pc := stretchedCeph(t, h)
	// A pool made before, by Ceph's default rule.
	if _, err := cephCLIAt(dir, "osd", "pool", "create", "before", "8"); err != nil {
		t.Fatal(err)
	}
	sm := stretch("stretch", pc, "nvme")
	h.create(t, sm)
	eventuallyWithin(t, 3*time.Minute, "the StretchMode is Ready", func() (bool, string) {
		c, err := h.condition(t, sm, xpv2.TypeReady)
		if err != nil {
			return false, err.Error()
		}
		s, _ := h.condition(t, sm, xpv2.TypeSynced) //nolint:errcheck // read just above
		return c.Status == corev1.ConditionTrue, jsonOf(c) + " " + jsonOf(s)
	})
	d := monDumpAt(t, dir)
	if !d.Stretch || d.Tiebreaker != "c" || d.Strategy != 3 {
		t.Errorf("ceph mon dump: stretch_mode %v, tiebreaker %q, election strategy %d; want true, c, 3 (connectivity)", d.Stretch, d.Tiebreaker, d.Strategy)
	}
	locations := map[string]string{}
	for _, m := range d.Mons {
		locations[m.Name] = m.Location
	}
	if want := map[string]string{"a": "{zone=eu-de-1a}", "b": "{zone=eu-de-1b}", "c": "{zone=arbiter}"}; jsonOf(locations) != jsonOf(want) {
		t.Errorf("the monitors' locations: %v, want %v", locations, want)
	}
	if err := h.kube.Get(ctx, client.ObjectKeyFromObject(sm), sm); err != nil {
		t.Fatal(err)
	}
	if a := sm.Status.AtProvider; !a.Enabled || a.TiebreakerMonitor != "c" || a.Rule != "stretch_zone_nvme" ||
		jsonOf(a.Monitors) != jsonOf([]v1alpha1.MonitorLocation{{Name: "a", Host: "node-1a-1", Zone: "eu-de-1a"}, {Name: "b", Host: "node-1b-1", Zone: "eu-de-1b"}, {Name: "c", Host: "cp-eu-de-1-node", Zone: "arbiter"}}) {
		t.Errorf("status.atProvider: %s", jsonOf(a))
	}

	// Every pool is now placed by the stretch rule: those there before (the
	// manager's), and a stretched Pool made after.
	p := &v1alpha1.Pool{ObjectMeta: metav1.ObjectMeta{Name: h.name("in-stretch")}, Spec: v1alpha1.PoolSpec{ClusterManagedResourceSpec: managedBy(pc),
		ForProvider: v1alpha1.PoolParameters{Name: "volumes", Size: 4, MinSize: new(int32(2)), DeviceClass: "nvme", Stretch: &v1alpha1.Stretch{},
			Application: "rbd", DataPolicy: v1alpha1.DataPolicyDelete}}}
	h.create(t, p)
	h.waitReady(t, p)
	if err := h.kube.Get(ctx, client.ObjectKeyFromObject(p), p); err != nil {
		t.Fatal(err)
	}
	if a := p.Status.AtProvider; a.CrushRule != "stretch_zone_nvme" || a.Size != 4 || a.MinSize != 2 {
		t.Errorf("the stretched Pool's status.atProvider: %s", jsonOf(a))
	}
	var pools []struct {
		Name    string `json:"pool_name"`
		Rule    int    `json:"crush_rule"`
		Size    int    `json:"size"`
		MinSize int    `json:"min_size"`
	}
	cephJSONAt(t, dir, &pools, "osd", "pool", "ls", "detail")
	var r crushRule
	cephJSONAt(t, dir, &r, "osd", "crush", "rule", "dump", "stretch_zone_nvme")
	if names := jsonOf(pools); !strings.Contains(names, `"before"`) || !strings.Contains(names, `"volumes"`) {
		t.Errorf("pools: %s, want before and volumes among them", names)
	}
	for _, pl := range pools {
		if pl.Rule != r.ID || pl.Size != 4 || pl.MinSize != 2 {
			t.Errorf("pool %s: rule %d, size %d, min_size %d; want stretch_zone_nvme (%d), 4, 2", pl.Name, pl.Rule, pl.Size, pl.MinSize, r.ID)
		}
	}

	// Deleted, the StretchMode leaves Ceph as it is, and goes also when
	// the credentials of its Ceph went first (as a deleted pool's do).
	h.delete(t, p)
	h.waitGone(t, p)
	h.delete(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: pc, Namespace: "crossplane-system"}})
	h.delete(t, sm)
	h.waitGone(t, sm)
	if d := monDumpAt(t, dir); !d.Stretch {
		t.Errorf("deleting the StretchMode left stretch mode: %+v", d)
	}
}
