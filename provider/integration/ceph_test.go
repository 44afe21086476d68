//go:build ceph

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ceph/go-ceph/rados"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/consumer-plane/apis/ceph/v1alpha1"
	"github.com/c5c3/consumer-plane/provider/internal/clients/ceph"
	"github.com/c5c3/consumer-plane/provider/internal/controller/ceph/pool"
	"github.com/c5c3/consumer-plane/test/cephtest"
)

// withCeph returns the harness and a ProviderConfig for the local Ceph,
// skipping (or failing under REQUIRE_INTEGRATION) when it does not run.
func withCeph(t *testing.T) (*harness, string) {
	t.Helper()
	h := start(t)
	return h, cephProviderConfig(t, h)
}

// cephProviderConfig creates (once per run) the ProviderConfig of the
// local Ceph and its key Secret.
func cephProviderConfig(t testing.TB, h *harness) string {
	t.Helper()
	key, err := cephtest.AdminKey()
	if err != nil {
		if os.Getenv("REQUIRE_INTEGRATION") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	pc := h.name("ceph")
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: pc, Namespace: "crossplane-system"},
		StringData: map[string]string{"key": key}}
	// Every test of the run shares them.
	for _, obj := range []client.Object{sec, &v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: pc}, Spec: v1alpha1.ProviderConfigSpec{
		MonHosts: []string{cephtest.MonHost}, User: "admin",
		Credentials: v1alpha1.CephCredentials{Source: xpv2.CredentialsSourceSecret, CommonCredentialSelectors: xpv2.CommonCredentialSelectors{
			SecretRef: &xpv2.SecretKeySelector{SecretReference: xpv2.SecretReference{Namespace: sec.Namespace, Name: sec.Name}, Key: "key"}}}}}} {
		if err := h.kube.Create(context.Background(), obj); err != nil && !kerrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	return pc
}

// cephCLI runs the real ceph CLI against the local cluster: the tests'
// independent view of what the provider did.
func cephCLI(args ...string) (string, error) { return cephtest.CLI(args...) }

func mustCeph(t *testing.T, args ...string) string {
	t.Helper()
	out, err := cephCLI(args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// cephJSONAt decodes what the ceph CLI answers to args (-f json) against
// the cluster start.sh runs in dir into into, failing the test otherwise.
func cephJSONAt(t *testing.T, dir string, into any, args ...string) {
	t.Helper()
	if err := tryCephJSONAt(dir, into, args...); err != nil {
		t.Fatal(err)
	}
}

// tryCephJSONAt is cephJSONAt for a check that is polled: a command that
// fails or times out (a monitor electing, a loaded machine) is a reason to
// look again, not the test's end.
//
// It asks the monitors (the manager, for pg stat) through librados, as
// the ceph CLI does, on one connection per cluster kept for the test
// binary's run: the CLI is a Python process of a third of a CPU-second,
// and the Ceph tests' polls started about a hundred of them a run, on the
// two cores every integration group shares (make test-integration).
func tryCephJSONAt(dir string, into any, args ...string) error {
	what := "ceph " + strings.Join(args, " ")
	cmd, mgr, err := cephCommand(args)
	if err != nil {
		return err
	}
	conn, err := cephConnAt(dir)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	var out []byte
	if mgr {
		out, _, err = conn.MgrCommand([][]byte{cmd})
	} else {
		out, _, err = conn.MonCommand(cmd)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if err := json.Unmarshal(out, into); err != nil {
		return fmt.Errorf("%s: %w: %s", what, err, out)
	}
	return nil
}

// cephCommand is the monitor (or, mgr true, manager) command the ceph CLI
// sends for args with -f json: the commands the tests read.
func cephCommand(args []string) (cmd []byte, mgr bool, err error) {
	c := map[string]string{"format": "json"}
	switch line := strings.Join(args, " "); {
	case line == "mon dump" || line == "osd dump" || line == "osd stat" || line == "health":
		c["prefix"] = line
	case line == "pg stat":
		c["prefix"], mgr = line, true
	case line == "osd pool ls detail":
		c["prefix"], c["detail"] = "osd pool ls", "detail"
	case len(args) == 5 && strings.HasPrefix(line, "osd crush rule dump "):
		c["prefix"], c["name"] = "osd crush rule dump", args[4]
	default:
		return nil, false, fmt.Errorf("ceph %s: not a command the tests send through librados (cephCommand)", line)
	}
	cmd, err = json.Marshal(c)
	return cmd, mgr, err
}

var (
	cephConnsMu sync.Mutex
	cephConns   = map[string]*rados.Conn{}
)

// cephConnAt is a librados connection as client.admin to the cluster
// start.sh runs in dir, configured by its ceph.conf as the CLI is, with
// the CLI's 30 s for a command (the tests' timeout of it).
func cephConnAt(dir string) (*rados.Conn, error) {
	cephConnsMu.Lock()
	defer cephConnsMu.Unlock()
	if c, ok := cephConns[dir]; ok {
		return c, nil
	}
	// Made as the provider makes its own, one librados connection at a
	// time in the process (ceph.Lifecycle).
	var c *rados.Conn
	err := ceph.Lifecycle(func() error {
		var err error
		if c, err = rados.NewConnWithUser("admin"); err != nil {
			return err
		}
		if err := c.ReadConfigFile(filepath.Join(dir, "ceph.conf")); err != nil {
			c.Shutdown()
			return err
		}
		// No admin socket: the conf's path is the CLI's, which would find it
		// taken and say so in its output.
		for k, v := range map[string]string{"admin_socket": "", "client_mount_timeout": "30", "rados_mon_op_timeout": "30", "log_to_stderr": "false", "err_to_stderr": "false"} {
			if err := c.SetConfigOption(k, v); err != nil {
				c.Shutdown()
				return err
			}
		}
		if err := c.Connect(); err != nil {
			c.Shutdown()
			return err
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	cephConns[dir] = c
	return c, nil
}

// closeCephConnAt closes the connection to the cluster in dir, before it
// stops: librados would go on looking for its monitors.
func closeCephConnAt(dir string) {
	cephConnsMu.Lock()
	defer cephConnsMu.Unlock()
	if c, ok := cephConns[dir]; ok {
		_ = ceph.Lifecycle(func() error { c.Shutdown(); return nil }) //nolint:errcheck // f returns none
		delete(cephConns, dir)
	}
}

// cephPool is one pool as `ceph osd pool ls detail` shows it, or nil.
func cephPool(t *testing.T, name string) map[string]any {
	t.Helper()
	var pools []map[string]any
	cephJSONAt(t, cephtest.Run(), &pools, "osd", "pool", "ls", "detail")
	for _, p := range pools {
		if p["pool_name"] == name {
			return p
		}
	}
	return nil
}

func TestIntegrationCephPoolLifecycle(t *testing.T) {
	h, pc := withCeph(t)
	ctx := context.Background()
	name := h.name("cc-pool")
	p := &v1alpha1.Pool{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.PoolSpec{ClusterManagedResourceSpec: managedBy(pc),
		ForProvider: v1alpha1.PoolParameters{Name: name, Size: 1, QuotaMaxBytes: ptr(100 << 20), Application: "rbd"}}}
	h.create(t, p)
	h.waitReady(t, p)
	got := cephPool(t, name)
	if got == nil || got["quota_max_bytes"].(float64) != 100<<20 || got["size"].(float64) != 1 {
		t.Fatalf("pool in ceph: %v", got)
	}
	if md := got["application_metadata"].(map[string]any)["rbd"].(map[string]any); md[pool.OwnerKey] != name {
		t.Fatalf("rbd application metadata %v, want %s=%s", md, pool.OwnerKey, name)
	}

	// Quota and compression changes.
	h.update(t, p, func() {
		p.Spec.ForProvider.QuotaMaxBytes = ptr(200 << 20)
		p.Spec.ForProvider.QuotaMaxObjects = ptr(1000)
		p.Spec.ForProvider.CompressionMode = "aggressive"
	})
	eventually(t, "quota and compression follow the spec", func() (bool, string) {
		got := cephPool(t, name)
		opts, _ := got["options"].(map[string]any)
		return got["quota_max_bytes"].(float64) == 200<<20 && got["quota_max_objects"].(float64) == 1000 && opts["compression_mode"] == "aggressive",
			fmt.Sprintf("%v %v %v", got["quota_max_bytes"], got["quota_max_objects"], opts)
	})

	// Usage shows in status.
	data := filepath.Join(t.TempDir(), "obj")
	if err := os.WriteFile(data, make([]byte, 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("rados", "-c", filepath.Join(cephtest.Run(), "ceph.conf"), "-p", name, "put", "obj", data).CombinedOutput(); err != nil {
		t.Fatalf("rados put: %v %s", err, out)
	}
	eventually(t, "usage in status", func() (bool, string) {
		_ = h.kube.Get(ctx, client.ObjectKeyFromObject(p), p)
		a := p.Status.AtProvider
		return a.Objects >= 1 && a.UsedBytes > 0 && a.AvailableBytes > 0, fmt.Sprintf("%+v", a)
	})

	// It holds an object: only with dataPolicy Delete does it go with it
	// (TestIntegrationCephPoolKeepsData).
	h.update(t, p, func() { p.Spec.ForProvider.DataPolicy = v1alpha1.DataPolicyDelete })
	h.delete(t, p)
	h.waitGone(t, p)
	if cephPool(t, name) != nil {
		t.Fatalf("pool %s still in ceph", name)
	}
}

// rbd runs the rbd CLI against the local Ceph.
func rbd(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("timeout", append([]string{"60", "rbd", "-c", filepath.Join(cephtest.Run(), "ceph.conf")}, args...)...).CombinedOutput(); err != nil {
		t.Fatalf("rbd %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// TestIntegrationCephPoolKeepsData: deleting a Pool resource never deletes
// the tenant's data with it unless the resource says it may (dataPolicy
// Delete), and the pool's status says what it holds (dataObjects, images):
// a pool holding an image, only a trashed image, or an image with
// a snapshot stays in Ceph, with its data, and the resource goes; with
// dataPolicy Delete it goes with its data; a pool whose images were all
// removed, and one that never had any, go as before.
func TestIntegrationCephPoolKeepsData(t *testing.T) {
	h, pc := withCeph(t)
	for _, tc := range []struct {
		name   string
		fill   func(t *testing.T, pool string)
		policy v1alpha1.DataPolicy
		kept   bool
	}{
		{"image", func(t *testing.T, pool string) { rbd(t, "create", "--size", "64", pool+"/tenant-volume-1") }, "", true},
		{"trashed", func(t *testing.T, pool string) {
			rbd(t, "create", "--size", "64", pool+"/tenant-volume-1")
			rbd(t, "trash", "mv", pool+"/tenant-volume-1")
		}, "", true},
		{"snapshot", func(t *testing.T, pool string) {
			rbd(t, "create", "--size", "64", pool+"/tenant-volume-1")
			rbd(t, "snap", "create", pool+"/tenant-volume-1@before")
		}, v1alpha1.DataPolicyRetain, true},
		{"deletable", func(t *testing.T, pool string) { rbd(t, "create", "--size", "64", pool+"/tenant-volume-1") }, v1alpha1.DataPolicyDelete, false},
		{"emptied", func(t *testing.T, pool string) {
			rbd(t, "create", "--size", "64", pool+"/tenant-volume-1")
			rbd(t, "rm", pool+"/tenant-volume-1")
		}, "", false},
		{"empty", func(*testing.T, string) {}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			name := h.name("cc-keep-" + tc.name)
			p := &v1alpha1.Pool{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.PoolSpec{ClusterManagedResourceSpec: managedBy(pc),
				ForProvider: v1alpha1.PoolParameters{Name: name, Size: 1, Application: "rbd", DataPolicy: tc.policy}}}
			h.create(t, p)
			h.waitReady(t, p)
			tc.fill(t, name)
			// What the pool holds is in its status, where the cloud's
			// function reads it before it lets the pool go.
			eventually(t, "pool "+name+" reports what it holds", func() (bool, string) {
				if err := h.kube.Get(context.Background(), client.ObjectKeyFromObject(p), p); err != nil {
					return false, err.Error()
				}
				o := p.Status.AtProvider
				wantImages := int64(0)
				if tc.kept || tc.name == "deletable" {
					wantImages = 1
				}
				return (o.DataObjects > 0) == (wantImages > 0) && o.Images == wantImages, fmt.Sprintf("dataObjects %d, images %d; want %d image(s)", o.DataObjects, o.Images, wantImages)
			})
			h.delete(t, p)
			h.waitGone(t, p)
			got := cephPool(t, name)
			switch {
			case tc.kept && got == nil:
				t.Fatalf("pool %s went with its data", name)
			case !tc.kept && got != nil:
				t.Fatalf("pool %s is still in ceph", name)
			case tc.kept:
				t.Cleanup(func() { _, _ = cephCLI("osd", "pool", "delete", name, name, "--yes-i-really-really-mean-it") })
				list := []string{"ls", name}
				if tc.name == "trashed" {
					list = []string{"trash", "ls", name}
				}
				out, err := exec.Command("timeout", append([]string{"60", "rbd", "-c", filepath.Join(cephtest.Run(), "ceph.conf")}, list...)...).CombinedOutput()
				if err != nil || !strings.Contains(string(out), "tenant-volume-1") {
					t.Errorf("the kept pool %s lists no tenant-volume-1 (rbd %s): %v %s", name, strings.Join(list, " "), err, out)
				}
				if tc.name != "image" {
					return
				}
				// Kept for the resource that went: another of its name,
				// as a later cloud of a reused name would compose, does
				// not get the data.
				again := &v1alpha1.Pool{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.PoolSpec{ClusterManagedResourceSpec: managedBy(pc),
					ForProvider: v1alpha1.PoolParameters{Name: name, Size: 1, Application: "rbd"}}}
				h.create(t, again)
				h.waitSyncError(t, again, "was kept with its data when the resource it belonged to went")
				h.delete(t, again)
				h.waitGone(t, again)
				if cephPool(t, name) == nil {
					t.Fatalf("deleting the resource that was refused the kept pool %s deleted it", name)
				}
			}
		})
	}
}

func TestIntegrationCephPoolDeviceClass(t *testing.T) {
	h, pc := withCeph(t)
	name := h.name("cc-hdd")
	p := &v1alpha1.Pool{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.PoolSpec{ClusterManagedResourceSpec: managedBy(pc),
		ForProvider: v1alpha1.PoolParameters{Name: name, Size: 1, DeviceClass: "hdd"}}}
	h.create(t, p)
	h.waitReady(t, p)
	var rule struct {
		ID int `json:"rule_id"`
	}
	cephJSONAt(t, cephtest.Run(), &rule, "osd", "crush", "rule", "dump", "replicated_hdd")
	if got := cephPool(t, name)["crush_rule"].(float64); int(got) != rule.ID {
		t.Fatalf("pool crush_rule %v, want replicated_hdd (%d)", got, rule.ID)
	}
	h.delete(t, p)
	h.waitGone(t, p)
}

// TestIntegrationCephRefusals: a pool that exists but is not ours, caps
// Ceph cannot parse and an unknown compression mode are each refused with
// a message naming the problem, and nothing in Ceph changes.
func TestIntegrationCephRefusals(t *testing.T) {
	h, pc := withCeph(t)
	foreign := h.name("foreign")
	mustCeph(t, "osd", "pool", "create", foreign)
	t.Cleanup(func() { _, _ = cephCLI("osd", "pool", "delete", foreign, foreign, "--yes-i-really-really-mean-it") })
	before := writable(cephPool(t, foreign))

	p := &v1alpha1.Pool{ObjectMeta: metav1.ObjectMeta{Name: h.name("takes-foreign")}, Spec: v1alpha1.PoolSpec{ClusterManagedResourceSpec: managedBy(pc),
		ForProvider: v1alpha1.PoolParameters{Name: foreign, Size: 1, QuotaMaxBytes: ptr(1 << 20)}}}
	bad := &v1alpha1.Client{ObjectMeta: metav1.ObjectMeta{Name: h.name("bad-caps")}, Spec: v1alpha1.ClientSpec{ClusterManagedResourceSpec: managedBy(pc),
		ForProvider: v1alpha1.ClientParameters{Entity: h.name("bad"), Caps: map[string]string{"mon": "profile rbd", "osd": "allow rwx pool=("}}}}
	h.create(t, p)
	h.create(t, bad)
	h.waitSyncError(t, p, "terminal:", fmt.Sprintf("a Ceph pool named %q already exists and was not created by this resource", foreign))
	h.waitSyncError(t, bad, "terminal:", "osd capability parse failed", "spec.forProvider.caps")
	if _, err := cephCLI("auth", "get", "client."+h.name("bad")); err == nil || !strings.Contains(err.Error(), "ENOENT") {
		t.Fatalf("client with bad caps exists in ceph (err %v)", err)
	}

	// Unknown compression modes never reach Ceph: the API server refuses them.
	zstd := &v1alpha1.Pool{ObjectMeta: metav1.ObjectMeta{Name: h.name("zstd")}, Spec: v1alpha1.PoolSpec{ClusterManagedResourceSpec: managedBy(pc),
		ForProvider: v1alpha1.PoolParameters{Name: h.name("zstd"), CompressionMode: "zstd"}}}
	err := h.kube.Create(context.Background(), zstd)
	if err == nil || !strings.Contains(err.Error(), "spec.forProvider.compressionMode") || !strings.Contains(err.Error(), `supported values: "none", "passive", "aggressive", "force"`) {
		t.Fatalf("create with compressionMode zstd: %v", err)
	}

	for _, mg := range []resource.Managed{p, bad} {
		h.delete(t, mg)
	}
	for _, mg := range []resource.Managed{p, bad} {
		h.waitGone(t, mg)
	}
	after := writable(cephPool(t, foreign))
	if after == nil || fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("foreign pool changed:\nbefore %v\nafter  %v", before, after)
	}
}

// writable keeps the pool fields the provider could write (size, quotas,
// application, compression and other options, CRUSH rule, PG count): Ceph
// itself changes others while a new pool settles (its "creating" flag and
// the epoch of the last change), which says nothing about the provider.
func writable(pool map[string]any) map[string]any {
	if pool == nil {
		return nil
	}
	out := map[string]any{}
	for _, k := range []string{"pool_name", "size", "min_size", "quota_max_bytes", "quota_max_objects", "application_metadata",
		"options", "crush_rule", "pg_num", "pg_num_target", "pg_autoscale_mode"} {
		out[k] = pool[k]
	}
	return out
}

func TestIntegrationCephClientLifecycle(t *testing.T) {
	h, pc := withCeph(t)
	ctx := context.Background()
	entity := h.name("cinder")
	c := &v1alpha1.Client{ObjectMeta: metav1.ObjectMeta{Name: entity}, Spec: v1alpha1.ClientSpec{
		ClusterManagedResourceSpec: xpv2.ClusterManagedResourceSpec{ProviderConfigReference: ref(pc),
			WriteConnectionSecretToReference: &xpv2.SecretReference{Namespace: "crossplane-system", Name: entity + "-key"}},
		ForProvider: v1alpha1.ClientParameters{Entity: entity, Caps: map[string]string{"mon": "profile rbd", "osd": "profile rbd pool=volumes"}}}}
	h.create(t, c)
	h.waitReady(t, c)
	secret := &corev1.Secret{}
	keyOf := func() (string, string) {
		k := strings.TrimSpace(mustCeph(t, "auth", "get-key", "client."+entity))
		if err := h.kube.Get(ctx, client.ObjectKey{Namespace: "crossplane-system", Name: entity + "-key"}, secret); err != nil {
			return k, ""
		}
		return k, string(secret.Data[v1alpha1.ConnectionSecretKeyKey])
	}
	eventually(t, "key in the connection secret", func() (bool, string) {
		inCeph, inSecret := keyOf()
		return inCeph != "" && inCeph == inSecret && string(secret.Data["entity"]) == "client."+entity && string(secret.Data["mon_host"]) == "127.0.0.1:6789",
			fmt.Sprintf("ceph %q secret %q %v", inCeph, inSecret, secret.Data)
	})
	first, _ := keyOf()

	// Caps change.
	h.update(t, c, func() { c.Spec.ForProvider.Caps["osd"] = "profile rbd pool=volumes, profile rbd-read-only pool=images" })
	eventually(t, "caps follow the spec", func() (bool, string) {
		out := mustCeph(t, "auth", "get", "client."+entity)
		return strings.Contains(out, "profile rbd-read-only pool=images"), out
	})

	// Key rotation: a new key in Ceph and in the secret; caps kept.
	h.update(t, c, func() { c.Spec.ForProvider.RotateKey = "2026-11-22" })
	eventually(t, "key rotated", func() (bool, string) {
		inCeph, inSecret := keyOf()
		return inCeph != first && inCeph == inSecret, fmt.Sprintf("ceph %q secret %q first %q", inCeph, inSecret, first)
	})
	if out := mustCeph(t, "auth", "get", "client."+entity); !strings.Contains(out, "profile rbd-read-only pool=images") {
		t.Fatalf("caps lost in rotation: %s", out)
	}
	rotated, _ := keyOf()
	// Rotated once: further polls keep the key.
	_ = h.kube.Get(ctx, client.ObjectKeyFromObject(c), c)
	if c.Status.AtProvider.KeyRotated != "2026-11-22" {
		t.Fatalf("status keyRotated %q", c.Status.AtProvider.KeyRotated)
	}
	h.waitReady(t, c)
	if k, _ := keyOf(); k != rotated {
		t.Fatalf("key changed again without a new rotateKey")
	}

	h.delete(t, c)
	h.waitGone(t, c)
	if _, err := cephCLI("auth", "get", "client."+entity); err == nil {
		t.Fatalf("client.%s still in ceph", entity)
	}
}
