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
	"github.com/c5c3/consumer-plane/provider/internal/clients/ceph"
	"github.com/c5c3/consumer-plane/provider/internal/controller/ceph/stretchmode"
	"github.com/c5c3/consumer-plane/test/cephtest"
)

// stretchedCeph starts, for one test, a Ceph laid out as Rook lays out a
// stretched pool cluster: monitors a and b on a node of zone eu-de-1a and
// of eu-de-1b, the arbiter's monitor c on a node of another cluster, and
// two nodes of one nvme OSD in each zone, its first monitor on ports msgr2
// and msgr1 (each test its own, beside the demo's stretched Ceph of
// local/demo/up.sh). It returns its run directory and a ProviderConfig
// named after base for it.
func stretchedCeph(t *testing.T, h *harness, base string, msgr2, msgr1 int) (string, string) {
	t.Helper()
	return cephOf(t, h, base, cephLayout{
		Mons:     []string{"a=node-1a-1", "b=node-1b-1", "c=cp-eu-de-1-node"},
		OSDHosts: []string{"eu-de-1a/node-1a-1", "eu-de-1a/node-1a-2", "eu-de-1b/node-1b-1", "eu-de-1b/node-1b-2"},
		Class:    "nvme", Msgr2: msgr2, Msgr1: msgr1})
}

// cephLayout is how local/ceph/start.sh lays out a Ceph of its own.
type cephLayout struct {
	// Mons are id=node (CEPH_MONS), OSDHosts zone/host, one OSD each
	// (CEPH_OSD_HOSTS), Class their device class.
	Mons, OSDHosts []string
	Class          string
	// Msgr2 and Msgr1 are the first monitor's ports; the next count up.
	Msgr2, Msgr1 int
}

// cephOf starts, for one test, a Ceph laid out so (its OSDs 256 MiB of
// memory each), and returns its run directory and a ProviderConfig named
// after base for it.
func cephOf(t *testing.T, h *harness, base string, l cephLayout) (string, string) {
	t.Helper()
	if _, err := exec.LookPath("ceph-mon"); err != nil {
		msg := "needs Ceph's daemons: run `make ceph-up` (local/ceph/install.sh as root)"
		if os.Getenv("REQUIRE_INTEGRATION") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	script, err := filepath.Abs("../../local/ceph/start.sh")
	if err != nil {
		t.Fatal(err)
	}
	stopAt := func(dir string) {
		cmd := exec.Command(filepath.Join(filepath.Dir(script), "stop.sh"))
		cmd.Env = append(os.Environ(), "COBALTCORE_CEPH_RUN="+dir)
		_ = cmd.Run() //nolint:errcheck // best effort
		_ = os.RemoveAll(dir)
	}
	// A run that died before its cleanups (a test binary aborted) left
	// this layout's daemons running on its fixed ports: stopped first, or
	// every later run fails to bind ("Address already in use").
	stale, _ := filepath.Glob(filepath.Join(os.TempDir(), base+"-*", "ceph.conf")) //nolint:errcheck // the pattern is valid
	for _, conf := range stale {
		stopAt(filepath.Dir(conf))
	}
	dir, err := os.MkdirTemp("", base+"-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		closeCephConnAt(dir)
		stopAt(dir)
	})
	cmd := exec.Command(script)
	cmd.Env = append(os.Environ(), "COBALTCORE_CEPH_RUN="+dir,
		"CEPH_MONS="+strings.Join(l.Mons, " "), "CEPH_OSD_HOSTS="+strings.Join(l.OSDHosts, " "),
		fmt.Sprintf("CEPH_MON_PORT=%d", l.Msgr2), fmt.Sprintf("CEPH_MON_V1_PORT=%d", l.Msgr1),
		"CEPH_DEVICE_CLASS="+l.Class, "OSD_BYTES=268435456")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("local/ceph/start.sh (%s): %v\n%s", base, err, out)
	}
	key, err := os.ReadFile(filepath.Join(dir, "admin.key"))
	if err != nil {
		t.Fatal(err)
	}
	pc := h.name(base)
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: pc, Namespace: "crossplane-system"},
		StringData: map[string]string{"key": strings.TrimSpace(string(key))}}
	h.create(t, sec)
	// Rook's endpoints, as the pool's rook-ceph-mon-endpoints name them.
	var mons []string
	for i, m := range l.Mons {
		id, _, _ := strings.Cut(m, "=")
		mons = append(mons, fmt.Sprintf("%s=127.0.0.1:%d", id, l.Msgr1+i))
	}
	h.create(t, &v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: pc}, Spec: v1alpha1.ProviderConfigSpec{
		MonHosts: mons, User: "admin",
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
//     placed by stretch_zone, with size 4 and min_size 2 (one made before
//     by Ceph's default rule too), and a stretched Pool made after it gets
//     what it asked for and is Ready. An OSD of another class than the
//     one the Pools ask for keeps a new one from being made, naming it.
//   - Deleting the StretchMode leaves Ceph in stretch mode, and needs no
//     access to it (its credentials deleted first).
func TestIntegrationCephStretchMode(t *testing.T) {
	// Beside TestFaultCephStretchedZoneLost: each has a Ceph of its own.
	t.Parallel()
	h, localPC := withCeph(t)
	ctx := context.Background()
	stretch := func(base, pc, class string) *v1alpha1.StretchMode {
		return &v1alpha1.StretchMode{ObjectMeta: metav1.ObjectMeta{Name: h.name(base)}, Spec: v1alpha1.StretchModeSpec{
			ClusterManagedResourceSpec: managedBy(pc),
			ForProvider:                v1alpha1.StretchModeParameters{Root: "default", ZoneType: "zone", DeviceClass: class, TiebreakerZone: "arbiter"}}}
	}

	// The local Ceph cannot take it: it waits, and nothing changes.
	before := monDumpAt(t, cephtest.Run())
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
	if after := monDumpAt(t, cephtest.Run()); after.Stretch || after.Strategy != before.Strategy || fmt.Sprint(after.Mons) != fmt.Sprint(before.Mons) {
		t.Errorf("the local Ceph's monitors changed while the StretchMode waited: %+v, were %+v", after, before)
	}
	h.delete(t, waiting)
	h.waitGone(t, waiting)

	// A stretched pool's Ceph takes it.
	dir, pc := stretchedCeph(t, h, "ceph-stretched", 3411, 6911)
	// A pool made before, by Ceph's default rule.
	if _, err := cephtest.CLIAt(dir, "osd", "pool", "create", "before", "8"); err != nil {
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
	if a := sm.Status.AtProvider; !a.Enabled || a.TiebreakerMonitor != "c" || a.Rule != "stretch_zone" ||
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
	if a := p.Status.AtProvider; a.CrushRule != "stretch_zone" || a.Size != 4 || a.MinSize != 2 || a.StretchMode != ceph.StretchModeGoverned {
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
	cephJSONAt(t, dir, &r, "osd", "crush", "rule", "dump", "stretch_zone")
	if names := jsonOf(pools); !strings.Contains(names, `"before"`) || !strings.Contains(names, `"volumes"`) {
		t.Errorf("pools: %s, want before and volumes among them", names)
	}
	for _, pl := range pools {
		if pl.Rule != r.ID || pl.Size != 4 || pl.MinSize != 2 {
			t.Errorf("pool %s: rule %d, size %d, min_size %d; want stretch_zone (%d), 4, 2", pl.Name, pl.Rule, pl.Size, pl.MinSize, r.ID)
		}
	}

	// An OSD of another class under the root: a stretched Pool on nvme is
	// refused, naming it, and not made (the rule would place it there).
	for _, args := range [][]string{{"osd", "crush", "rm-device-class", "osd.3"}, {"osd", "crush", "set-device-class", "hdd", "osd.3"}} {
		if _, err := cephtest.CLIAt(dir, args...); err != nil {
			t.Fatal(err)
		}
	}
	mixed := &v1alpha1.Pool{ObjectMeta: metav1.ObjectMeta{Name: h.name("mixed-class")}, Spec: v1alpha1.PoolSpec{ClusterManagedResourceSpec: managedBy(pc),
		ForProvider: v1alpha1.PoolParameters{Name: "mixed", Size: 4, MinSize: new(int32(2)), DeviceClass: "nvme", Stretch: &v1alpha1.Stretch{},
			Application: "rbd", DataPolicy: v1alpha1.DataPolicyDelete}}}
	h.create(t, mixed)
	h.waitSyncError(t, mixed, `a stretched pool on device class "nvme" needs every OSD under CRUSH root default of that class, and osd.3 is "hdd"`)
	if out, _ := cephtest.CLIAt(dir, "osd", "pool", "ls"); strings.Contains(out, "mixed") { //nolint:errcheck // the pool list or nothing
		t.Errorf("pool mixed was made on a cluster whose osd.3 is hdd: %s", out)
	}
	h.delete(t, mixed)
	h.waitGone(t, mixed)

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
