//go:build ceph

package ceph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/c5c3/consumer-plane/agents/apis/storage/v1alpha1"
	"github.com/c5c3/consumer-plane/agents/internal/ceph"
	"github.com/c5c3/consumer-plane/internal/cephcaps"
	"github.com/c5c3/consumer-plane/test/kubetest"
)

func TestMain(m *testing.M) {
	if err := storagev1alpha1.AddToScheme(clientgoscheme.Scheme); err != nil {
		panic(err)
	}
	os.Exit(kubetest.Main(m, "../../../cluster/crds/agents"))
}

// cephConf is the local Ceph of `make ceph-up` (local/ceph).
func cephConf(t *testing.T) string {
	if testing.Short() {
		// make test-unit runs -short beside make ceph-up: a monitor that
		// answers before the pools exist would fail these tests (stop 75's
		// CI run did).
		t.Skip("an integration test: make test-integration runs it")
	}
	dir := os.Getenv("COBALTCORE_CEPH_RUN")
	if dir == "" {
		dir = "/tmp/cobaltcore-ceph"
	}
	conf := filepath.Join(dir, "ceph.conf")
	if err := exec.Command("timeout", "10", "ceph", "-c", conf, "--connect-timeout", "5", "health").Run(); err != nil {
		msg := "needs the local Ceph: run `make ceph-up`"
		if os.Getenv("REQUIRE_INTEGRATION") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return conf
}

func cli(t *testing.T, conf string, into any, args ...string) {
	t.Helper()
	out, err := exec.Command("timeout", append([]string{"30", "ceph", "-c", conf, "--connect-timeout", "10", "-f", "json"}, args...)...).Output()
	if err != nil {
		t.Fatalf("ceph %v: %v", args, err)
	}
	if err := json.Unmarshal(out, into); err != nil {
		t.Fatal(err)
	}
}

// TestIntegrationStorageAgent publishes the local Ceph into a real
// kube-apiserver and checks it against what the ceph CLI says: health,
// capacity, each pool's usage (a pool written to by the test included) and
// the OSDs.
func TestIntegrationStorageAgent(t *testing.T) {
	conf := cephConf(t)
	kube := kubetest.Client(t)
	pool := fmt.Sprintf("agent-test-%d", time.Now().Unix()%100000)
	run := func(args ...string) {
		if out, err := exec.Command("timeout", append([]string{"60", args[0], "-c", conf}, args[1:]...)...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v: %s", args, err, out)
		}
	}
	run("ceph", "osd", "pool", "create", pool, "8")
	t.Cleanup(func() {
		_ = exec.Command("timeout", "60", "ceph", "-c", conf, "osd", "pool", "rm", pool, pool, "--yes-i-really-really-mean-it").Run()
	})
	data := filepath.Join(t.TempDir(), "obj")
	if err := os.WriteFile(data, make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	run("rados", "-p", pool, "put", "o1", data)
	run("rados", "-p", pool, "put", "o2", data)

	conn, err := ceph.Dial(conf, "admin", "", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	a := &ceph.Agent{Client: kube, Name: "ceph-test", Mon: conn, Interval: 30 * time.Second, Log: testr.New(t)}
	t.Cleanup(func() {
		_ = kube.Delete(context.Background(), &storagev1alpha1.CephStatus{ObjectMeta: metav1.ObjectMeta{Name: "ceph-test"}})
	})

	// Capacity moves as the OSD writes its own metadata: compare a publication
	// with the CLI read right after it, until one matches.
	var last error
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
		if err := a.Publish(context.Background()); err != nil {
			t.Fatal(err)
		}
		obj := &storagev1alpha1.CephStatus{}
		if err := kube.Get(context.Background(), client.ObjectKey{Name: "ceph-test"}, obj); err != nil {
			t.Fatal(err)
		}
		if last = matchCLI(t, conf, obj.Status, pool); last == nil {
			if testutil.ToFloat64(a.Metrics.PoolObjects.WithLabelValues(pool)) != 2 {
				t.Fatalf("metric pool_objects{pool=%s} = %v, want 2", pool, testutil.ToFloat64(a.Metrics.PoolObjects.WithLabelValues(pool)))
			}
			if c := meta.FindStatusCondition(obj.Status.Conditions, "Ready"); c == nil || c.Status != "True" {
				t.Fatalf("Ready condition %+v", c)
			}
			reportAdvances(t, kube, a, obj)
			return
		}
	}
	t.Fatalf("the published status never matched the ceph CLI: %v", last)
}

func matchCLI(t *testing.T, conf string, st storagev1alpha1.CephStatusStatus, pool string) error {
	var status struct {
		FSID   string `json:"fsid"`
		Health struct {
			Status string `json:"status"`
		} `json:"health"`
	}
	cli(t, conf, &status, "status")
	var df struct {
		Stats struct {
			Total int64 `json:"total_bytes"`
			Used  int64 `json:"total_used_raw_bytes"`
			Avail int64 `json:"total_avail_bytes"`
		} `json:"stats"`
		Pools []struct {
			Name  string `json:"name"`
			Stats struct {
				Stored  int64 `json:"stored"`
				Objects int64 `json:"objects"`
			} `json:"stats"`
		} `json:"pools"`
	}
	cli(t, conf, &df, "df")
	var osds struct {
		OSDs []struct {
			OSD int64 `json:"osd"`
			Up  int   `json:"up"`
			In  int   `json:"in"`
		} `json:"osds"`
	}
	cli(t, conf, &osds, "osd", "dump")

	if st.FSID != status.FSID || st.Health != status.Health.Status {
		return fmt.Errorf("fsid/health %s %s, CLI %s %s", st.FSID, st.Health, status.FSID, status.Health.Status)
	}
	if st.Capacity.TotalBytes != df.Stats.Total || st.Capacity.UsedBytes != df.Stats.Used || st.Capacity.AvailableBytes != df.Stats.Avail {
		return fmt.Errorf("capacity %+v, CLI %+v", st.Capacity, df.Stats)
	}
	if len(st.Pools) != len(df.Pools) {
		return fmt.Errorf("%d pools, CLI %d", len(st.Pools), len(df.Pools))
	}
	found := false
	for _, p := range df.Pools {
		for _, q := range st.Pools {
			if q.Name == p.Name && (q.StoredBytes != p.Stats.Stored || q.Objects != p.Stats.Objects) {
				return fmt.Errorf("pool %s stored=%d objects=%d, CLI %d %d", p.Name, q.StoredBytes, q.Objects, p.Stats.Stored, p.Stats.Objects)
			}
			if q.Name == pool && q.Name == p.Name {
				found = true
				if q.Objects != 2 || q.StoredBytes != 2<<20 {
					return fmt.Errorf("pool %s: %d objects, %d bytes stored; the test wrote 2 objects of 1 MiB", pool, q.Objects, q.StoredBytes)
				}
			}
		}
	}
	if !found {
		return fmt.Errorf("pool %s not published", pool)
	}
	up, in := 0, 0
	for _, o := range osds.OSDs {
		up += o.Up
		in += o.In
	}
	if st.OSDs.Total != len(osds.OSDs) || st.OSDs.Up != up || st.OSDs.In != in {
		return fmt.Errorf("OSDs %d/%d/%d, CLI %d/%d/%d", st.OSDs.Total, st.OSDs.Up, st.OSDs.In, len(osds.OSDs), up, in)
	}
	return nil
}

// TestIntegrationStorageAgentRookEndpoints connects the way the DaemonSet
// does in a pool cluster: Rook's mon endpoints and the key of the
// read-only user the storage function composes (a CephClient with
// cephcaps.StorageAgent), no ceph.conf; it reads what the admin reads, and
// that user can change nothing and read no key and no object.
func TestIntegrationStorageAgentRookEndpoints(t *testing.T) {
	conf := cephConf(t)
	entity := fmt.Sprintf("client.%s-%d", cephcaps.StorageAgentUser, time.Now().UnixNano()%100000)
	args := []string{"auth", "get-or-create", entity}
	for _, k := range []string{"mon", "mgr"} {
		args = append(args, k, cephcaps.StorageAgent()[k])
	}
	var created []struct {
		Key string `json:"key"`
	}
	cli(t, conf, &created, args...)
	t.Cleanup(func() { _ = exec.Command("timeout", "30", "ceph", "-c", conf, "auth", "del", entity).Run() })
	if len(created) != 1 || created[0].Key == "" {
		t.Fatalf("ceph auth get-or-create %s returned %+v", entity, created)
	}
	user, key := strings.TrimPrefix(entity, "client."), created[0].Key

	if _, err := ceph.DialMon("", user, "k", time.Second); err == nil {
		t.Fatal("no endpoints accepted")
	}
	conn, err := ceph.DialMon("a=127.0.0.1:6789", user, key, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	st, err := ceph.Read(conn)
	if err != nil {
		t.Fatalf("the storage agent's user cannot read what the agent reads: %v", err)
	}
	var status struct {
		FSID string `json:"fsid"`
	}
	cli(t, conf, &status, "status")
	if st.FSID != status.FSID || st.OSDs.Total == 0 || len(st.Pools) == 0 {
		t.Fatalf("read fsid %s with %d OSDs and %d pools; the CLI says fsid %s", st.FSID, st.OSDs.Total, len(st.Pools), status.FSID)
	}

	keyring := filepath.Join(t.TempDir(), "keyring")
	if err := os.WriteFile(keyring, []byte(fmt.Sprintf("[%s]\n\tkey = %s\n", entity, key)), 0o600); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(t.TempDir(), "obj")
	if err := os.WriteFile(data, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	pool := st.Pools[0].Name
	t.Cleanup(func() {
		_ = exec.Command("timeout", "60", "ceph", "-c", conf, "osd", "pool", "rm", "agent-may-not", "agent-may-not", "--yes-i-really-really-mean-it").Run()
	})
	for what, cmd := range map[string][]string{
		"create a pool":    {"ceph", "osd", "pool", "create", "agent-may-not", "8"},
		"read the keys":    {"ceph", "auth", "ls"},
		"write an object":  {"rados", "-p", pool, "put", "agent-may-not", data},
		"list the objects": {"rados", "-p", pool, "ls"},
	} {
		args := append([]string{"20", cmd[0], "-c", conf, "-n", entity, "--keyring", keyring, "--connect-timeout", "10"}, cmd[1:]...)
		if out, err := exec.Command("timeout", args...).CombinedOutput(); err == nil {
			t.Errorf("the storage agent's user could %s: %s", what, out)
		}
	}
}

// reportAdvances: each publication carries its time, even when nothing else
// changed, so that the pool can tell a stale report (#54).
func reportAdvances(t *testing.T, kube client.Client, a *ceph.Agent, first *storagev1alpha1.CephStatus) {
	t.Helper()
	if first.Status.ReportedAt == nil || time.Since(first.Status.ReportedAt.Time) > time.Minute {
		t.Fatalf("reportedAt %v: not the time of the publication", first.Status.ReportedAt)
	}
	time.Sleep(1100 * time.Millisecond) // reportedAt keeps seconds
	if err := a.Publish(context.Background()); err != nil {
		t.Fatal(err)
	}
	next := &storagev1alpha1.CephStatus{}
	if err := kube.Get(context.Background(), client.ObjectKey{Name: first.Name}, next); err != nil {
		t.Fatal(err)
	}
	if next.Status.ReportedAt == nil || !next.Status.ReportedAt.After(first.Status.ReportedAt.Time) {
		t.Fatalf("published again, reportedAt is %v, was %v", next.Status.ReportedAt, first.Status.ReportedAt)
	}
	if next.Status.ReportInterval == nil || next.Status.ReportInterval.Duration != a.Interval {
		t.Errorf("reportInterval %v, the agent publishes every %s", next.Status.ReportInterval, a.Interval)
	}
}
