package cephcaps

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/c5c3/consumer-plane/test/cephtest"
)

// localCeph skips (or fails under REQUIRE_INTEGRATION) without the local
// Ceph and its CLIs.
func localCeph(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("an integration test (make test-integration)")
	}
	conf := filepath.Join(cephtest.Run(), "ceph.conf")
	_, errConf := os.Stat(conf)
	_, errRBD := exec.LookPath("rbd")
	c, errMon := net.DialTimeout("tcp", "127.0.0.1:6789", time.Second)
	if errConf != nil || errRBD != nil || errMon != nil {
		msg := "needs the local Ceph and its rbd CLI: run make ceph-up"
		if os.Getenv("REQUIRE_INTEGRATION") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	_ = c.Close()
	return conf
}

// TestTenantCapsIntegration gives two tenants the caps of Tenant on their
// own pools of one Ceph, as two clouds sharing a storage pool get them, and
// checks with their own keys: each lists, trashes and removes images in its
// pools (itself and through the mgr), and can do none of it in the other's.
func TestTenantCapsIntegration(t *testing.T) {
	conf := localCeph(t)
	run := fmt.Sprintf("%d", time.Now().UnixNano()%1_000_000)
	dir := t.TempDir()
	admin := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(args[0], append([]string{"-c", conf}, args[1:]...)...).CombinedOutput() //nolint:gosec // test commands
		if err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	pool := func(name string) string {
		p := "caps-" + name + "-" + run
		admin("ceph", "osd", "pool", "create", p, "8")
		admin("rbd", "pool", "init", p)
		t.Cleanup(func() {
			_ = exec.Command("ceph", "-c", conf, "osd", "pool", "rm", p, p, "--yes-i-really-really-mean-it").Run() //nolint:gosec // test cleanup
		})
		return p
	}
	tenant := func(name string, pools ...string) func(args ...string) error {
		entity := "client.caps-" + name + "-" + run
		keyring := filepath.Join(dir, name+".keyring")
		args := []string{"ceph", "auth", "get-or-create", entity}
		for _, k := range []string{"mon", "mgr", "osd"} {
			args = append(args, k, Tenant(pools...)[k])
		}
		args = append(args, "-o", keyring)
		admin(args...)
		t.Cleanup(func() { _ = exec.Command("ceph", "-c", conf, "auth", "del", entity).Run() }) //nolint:gosec // test cleanup
		return func(args ...string) error {
			out, err := exec.Command(args[0], append([]string{"-c", conf, "-n", entity, "--keyring", keyring}, args[1:]...)...).CombinedOutput() //nolint:gosec // test commands
			if err != nil {
				return fmt.Errorf("%w: %s", err, out)
			}
			return nil
		}
	}
	a1, a2, b := pool("a1"), pool("a2"), pool("b")
	asA, asB := tenant("a", a1, a2), tenant("b", b)
	for _, img := range []string{a2 + "/mine", a2 + "/mine-too", a2 + "/mine-three", b + "/theirs"} {
		admin("rbd", "create", img, "--size", "1M")
	}

	for what, err := range map[string]error{
		"list its pool":                    asA("rbd", "ls", a1),
		"list its second pool":             asA("rbd", "ls", a2),
		"trash its image":                  asA("rbd", "trash", "mv", a2+"/mine"),
		"remove its image":                 asA("rbd", "rm", a2+"/mine-too"),
		"remove its image through the mgr": asA("ceph", "rbd", "task", "add", "remove", a2+"/mine-three"),
		"the other tenant list its pool":   asB("rbd", "ls", b),
	} {
		if err != nil {
			t.Errorf("tenant a may %s, but: %v", what, err)
		}
	}
	for what, err := range map[string]error{
		"list the other tenant's pool":                     asA("rbd", "ls", b),
		"trash the other tenant's image":                   asA("rbd", "trash", "mv", b+"/theirs"),
		"remove the other tenant's image":                  asA("rbd", "rm", b+"/theirs"),
		"remove the other tenant's image through the mgr":  asA("ceph", "rbd", "task", "add", "remove", b+"/theirs"),
		"flatten the other tenant's image through the mgr": asA("ceph", "rbd", "task", "add", "flatten", b+"/theirs"),
	} {
		if err == nil {
			t.Errorf("tenant a could %s", what)
		}
	}
	time.Sleep(2 * time.Second) // the mgr works through its tasks in the background
	if out := admin("rbd", "ls", b); !strings.Contains(out, "theirs") {
		t.Errorf("tenant b's image is gone: rbd ls %s: %q", b, out)
	}
}
