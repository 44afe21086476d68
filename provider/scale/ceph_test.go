package scale

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/c5c3/consumer-plane/test/cephtest"
	"github.com/c5c3/consumer-plane/test/openstackstub"
)

// The clouds' storage. Clouds share a storage pool's Ceph (its one
// ProviderConfig names its monitors and admin key), where each cloud has a
// volumes and an images Pool and a Client whose caps reach only those two
// (the OpenStackCluster function's composeStorage). The harness puts the
// first COBALTCORE_SCALE_CEPH clouds (make bench-scale CEPH=N, default
// none) in the local Ceph of make ceph-up, a real monitor and OSD: a share
// of the landscape, as #55 allows, since one memstore OSD holds some
// hundreds of pools, not 10,000. The provider is then built with librados
// (the Makefile's CEPH_TAGS), as the package ships it.
var cephShare = envInt("COBALTCORE_SCALE_CEPH", 0)

const (
	// cephProviderConfig is the storage pool's ProviderConfig, and its
	// key Secret's name.
	cephProviderConfig = "scale-storage-pool"
	// cephPrefix begins the name of every pool and CephX user the harness
	// has the provider make, so that a run removes what an earlier one
	// left in the local Ceph.
	cephPrefix = "scale-"
	// cephQuota is each pool's quota, what a drift changes.
	cephQuota = 1 << 30
)

// cephObjects are a cloud's storage in the storage pool.
var cephObjects = `---
apiVersion: ceph.provider.c5c3.io/v1alpha1
kind: Pool
metadata: {name: {{.Name}}-volumes}
spec:
  forProvider: {name: ` + cephPrefix + `{{.Name}}-volumes, size: 1, application: rbd, quotaMaxBytes: ` + fmt.Sprint(cephQuota) + `}
  providerConfigRef: {name: {{.Ceph}}}
---
apiVersion: ceph.provider.c5c3.io/v1alpha1
kind: Pool
metadata: {name: {{.Name}}-images}
spec:
  forProvider: {name: ` + cephPrefix + `{{.Name}}-images, size: 1, application: rbd, quotaMaxBytes: ` + fmt.Sprint(cephQuota) + `}
  providerConfigRef: {name: {{.Ceph}}}
---
apiVersion: ceph.provider.c5c3.io/v1alpha1
kind: Client
metadata: {name: {{.Name}}}
spec:
  forProvider:
    entity: ` + cephPrefix + `{{.Name}}
    caps:
      mon: profile rbd
      mgr: profile rbd pool=` + cephPrefix + `{{.Name}}-volumes, profile rbd pool=` + cephPrefix + `{{.Name}}-images
      osd: profile rbd pool=` + cephPrefix + `{{.Name}}-volumes, profile rbd pool=` + cephPrefix + `{{.Name}}-images
  providerConfigRef: {name: {{.Ceph}}}
  writeConnectionSecretToRef: {name: {{.Name}}-ceph, namespace: crossplane-system}
`

// perCephCloud is how many managed resources cephObjects declares.
const perCephCloud = 3

// resourcesIn is how many managed resources clouds have.
func resourcesIn(clouds []*openstackstub.Cloud) int {
	n := 0
	for _, c := range clouds {
		n += perCloud
		if c.Index < cephShare {
			n += perCephCloud
		}
	}
	return n
}

// setUpCeph readies the storage pool when the landscape has one: the local
// Ceph runs (or the benchmark fails, saying how to start it), what an
// earlier run left in it is gone (and will be again at the end), and its
// ProviderConfig and key Secret exist.
func setUpCeph(tb testing.TB, kube client.Client) {
	tb.Helper()
	if cephShare == 0 {
		return
	}
	key, err := cephtest.AdminKey()
	mustTB(tb, err)
	removeCephLeftovers(tb)
	tb.Cleanup(func() { removeCephLeftovers(tb) })
	for _, y := range []string{fmt.Sprintf(`
apiVersion: v1
kind: Secret
metadata: {name: %[1]s, namespace: crossplane-system}
stringData: {key: %[2]s}`, cephProviderConfig, key), fmt.Sprintf(`
apiVersion: ceph.provider.c5c3.io/v1alpha1
kind: ProviderConfig
metadata: {name: %[1]s}
spec:
  monHosts: ["%[2]s"]
  user: admin
  credentials: {source: Secret, secretRef: {name: %[1]s, namespace: crossplane-system, key: key}}`, cephProviderConfig, cephtest.MonHost)} {
		u := &unstructured.Unstructured{}
		mustTB(tb, yaml.Unmarshal([]byte(y), &u.Object))
		if err := kube.Create(context.Background(), u); err != nil && !kerrors.IsAlreadyExists(err) {
			tb.Fatal(err)
		}
	}
}

// removeCephLeftovers deletes the harness's pools and users from the local
// Ceph.
func removeCephLeftovers(tb testing.TB) {
	tb.Helper()
	var pools []string
	mustTB(tb, cephJSON(&pools, "osd", "pool", "ls"))
	var auth struct {
		AuthDump []struct {
			Entity string `json:"entity"`
		} `json:"auth_dump"`
	}
	mustTB(tb, cephJSON(&auth, "auth", "ls"))
	for _, p := range pools {
		if strings.HasPrefix(p, cephPrefix) {
			_, err := cephtest.CLI("osd", "pool", "delete", p, p, "--yes-i-really-really-mean-it")
			mustTB(tb, err)
		}
	}
	for _, e := range auth.AuthDump {
		if strings.HasPrefix(e.Entity, "client."+cephPrefix) {
			_, err := cephtest.CLI("auth", "del", e.Entity)
			mustTB(tb, err)
		}
	}
}

// cephJSON runs the ceph CLI for JSON into v.
func cephJSON(v any, args ...string) error {
	out, err := cephtest.CLI(append(args, "--format", "json")...)
	if err != nil {
		return err
	}
	return json.Unmarshal([]byte(out), v)
}

// cephReads are the monitor commands that change nothing: the harness's
// own list (not the provider's), so that a write the provider took for a
// read still counts as a write.
var cephReads = []string{"osd pool ls", "df", "osd crush rule dump", "osd getcrushmap", "osd crush class ls", "osd tree",
	"auth get", "auth ls", "status", "health", "mon dump", "mon metadata"}

// cephCommands returns how many monitor commands p has sent, by prefix
// (cobaltcore_provider_ceph_commands_total).
func (p *process) cephCommands(tb testing.TB) map[string]float64 {
	tb.Helper()
	families, err := p.scrape()
	mustTB(tb, err)
	out := map[string]float64{}
	for _, m := range families["cobaltcore_provider_ceph_commands_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "prefix" {
				out[l.GetValue()] += m.GetCounter().GetValue()
			}
		}
	}
	return out
}

// cephSteady says what the provider asked of the storage pool's Ceph
// between two counts over minutes, and fails on a command that changes
// something: a converged landscape's Ceph has nothing to change.
func cephSteady(tb testing.TB, before, after map[string]float64, minutes float64) {
	tb.Helper()
	var all float64
	var by []string
	for _, prefix := range slices.Sorted(maps.Keys(after)) {
		d := after[prefix] - before[prefix]
		if d == 0 {
			continue
		}
		all += d
		by = append(by, fmt.Sprintf("%s %.1f", prefix, d/minutes))
		if !slices.Contains(cephReads, prefix) {
			tb.Errorf("the provider sent %.0f %q commands to the storage pool's Ceph in the steady window: steady state must change nothing", d, prefix)
		}
	}
	say(tb, "steady: Ceph (%d clouds' pools and clients on one monitor): %.1f monitor commands a minute (%s)", cephShare, all/minutes, strings.Join(by, ", "))
}

// cephRepairTime changes the quota of the first cloud's volumes pool
// behind the provider's back (as a Ceph administrator's command would) and
// returns the seconds until the provider set it back.
func cephRepairTime(tb testing.TB, p crasher, poll time.Duration) float64 {
	tb.Helper()
	pool := cephPrefix + cloudName(0) + "-volumes"
	_, err := cephtest.CLI("osd", "pool", "set-quota", pool, "max_bytes", fmt.Sprint(2*cephQuota))
	mustTB(tb, err)
	changed := time.Now()
	for deadline := changed.Add(3*poll + time.Minute); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		mustTB(tb, p.crashed())
		var q struct {
			MaxBytes int64 `json:"quota_max_bytes"`
		}
		mustTB(tb, cephJSON(&q, "osd", "pool", "get-quota", pool))
		if q.MaxBytes == cephQuota {
			return time.Since(changed).Seconds()
		}
	}
	tb.Fatalf("the quota of pool %s, changed behind the provider, was not set back within %s", pool, 3*poll+time.Minute)
	return 0
}
