// Package ovntest starts real OVN databases for integration tests: a
// Northbound database (one ovsdb-server, or a 3-member Raft cluster), a
// Southbound database and ovn-northd translating between them, as plain
// processes on loopback in a temporary directory. Tests that cannot find
// ovsdb-server skip with a message saying how to get it (and fail under
// REQUIRE_INTEGRATION).
package ovntest

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Schemas as Debian's ovn-common installs them.
const (
	NBSchema = "/usr/share/ovn/ovn-nb.ovsschema"
	SBSchema = "/usr/share/ovn/ovn-sb.ovsschema"
)

// An OVN is a running Northbound, Southbound and ovn-northd.
type OVN struct {
	dir string
	// NB are the Northbound endpoints (one, or the three Raft members).
	NB []string
	// SB is the Southbound endpoint.
	SB string

	nb     []*member
	sb     *member
	northd *exec.Cmd
	// extraNB are more ovsdb-server arguments for a single Northbound.
	extraNB []string
}

// member is one ovsdb-server.
type member struct {
	args []string
	ctl  string
	cmd  *exec.Cmd
}

// Available reports whether the OVN binaries are installed, or skips t.
func Available(t testing.TB) {
	t.Helper()
	for _, bin := range []string{"ovsdb-server", "ovsdb-tool", "ovn-northd", "ovn-nbctl", "ovs-appctl"} {
		if _, err := exec.LookPath(bin); err != nil {
			msg := fmt.Sprintf("needs %s: install the Debian package ovn-central (local/openstack/install.sh does, as root)", bin)
			if os.Getenv("REQUIRE_INTEGRATION") != "" && !testing.Short() {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
	if testing.Short() {
		t.Skip("integration test: skipped with -short")
	}
}

// Start runs a single-server Northbound (raft false) or a 3-member Raft
// cluster, a Southbound and ovn-northd. Everything stops when t ends.
func Start(t testing.TB, raft bool) *OVN {
	t.Helper()
	Available(t)
	o := &OVN{dir: t.TempDir()}
	t.Cleanup(o.Stop)
	if err := o.start(raft); err != nil {
		t.Fatalf("cannot start OVN: %v (logs in %s)", err, o.dir)
	}
	return o
}

func (o *OVN) start(raft bool) error {
	sbPort := freePort()
	sbDB := filepath.Join(o.dir, "sb.db")
	if err := run("ovsdb-tool", "create", sbDB, SBSchema); err != nil {
		return err
	}
	o.sb = o.server(sbDB, "sb", sbPort)
	o.SB = fmt.Sprintf("tcp:127.0.0.1:%d", sbPort)
	if !raft {
		nbDB := filepath.Join(o.dir, "nb.db")
		if err := run("ovsdb-tool", "create", nbDB, NBSchema); err != nil {
			return err
		}
		port := freePort()
		m := o.server(nbDB, "nb", port)
		m.args = append(m.args, o.extraNB...)
		o.nb = []*member{m}
		o.NB = []string{fmt.Sprintf("tcp:127.0.0.1:%d", port)}
	} else {
		raftPorts := []int{freePort(), freePort(), freePort()}
		for i := range 3 {
			db := filepath.Join(o.dir, fmt.Sprintf("nb%d.db", i+1))
			self := fmt.Sprintf("tcp:127.0.0.1:%d", raftPorts[i])
			var err error
			if i == 0 {
				err = run("ovsdb-tool", "create-cluster", db, NBSchema, self)
			} else {
				err = run("ovsdb-tool", "join-cluster", db, "OVN_Northbound", self, fmt.Sprintf("tcp:127.0.0.1:%d", raftPorts[0]))
			}
			if err != nil {
				return err
			}
		}
		for i := range 3 {
			port := freePort()
			o.nb = append(o.nb, o.server(filepath.Join(o.dir, fmt.Sprintf("nb%d.db", i+1)), fmt.Sprintf("nb%d", i+1), port))
			o.NB = append(o.NB, fmt.Sprintf("tcp:127.0.0.1:%d", port))
		}
	}
	for _, m := range append([]*member{o.sb}, o.nb...) {
		if err := m.startProcess(o.dir); err != nil {
			return err
		}
	}
	if raft {
		if err := o.waitLeader(15 * time.Second); err != nil {
			return err
		}
	}
	nbDB := strings.Join(o.NB, ",")
	if err := run("ovn-nbctl", "--timeout=20", "--db="+nbDB, "init"); err != nil {
		return err
	}
	if err := run("ovn-sbctl", "--timeout=20", "--db="+o.SB, "init"); err != nil {
		return err
	}
	o.northd = exec.Command("ovn-northd", "--no-chdir", "--ovnnb-db="+nbDB, "--ovnsb-db="+o.SB,
		"--unixctl="+filepath.Join(o.dir, "northd.ctl"), "--log-file="+filepath.Join(o.dir, "northd.log"),
		"--pidfile="+filepath.Join(o.dir, "northd.pid"))
	return o.northd.Start()
}

func (o *OVN) server(db, name string, port int) *member {
	ctl := filepath.Join(o.dir, name+".ctl")
	return &member{ctl: ctl, args: []string{db, "--no-chdir", "--remote=ptcp:" + fmt.Sprint(port) + ":127.0.0.1",
		"--unixctl=" + ctl, "--log-file=" + filepath.Join(o.dir, name+".log"), "--pidfile=" + filepath.Join(o.dir, name+".pid")}}
}

func (m *member) startProcess(dir string) error {
	m.cmd = exec.Command("ovsdb-server", m.args...)
	m.cmd.Dir = dir
	if err := m.cmd.Start(); err != nil {
		return err
	}
	go func(c *exec.Cmd) { _ = c.Wait() }(m.cmd)
	// Ready when its control socket answers.
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if exec.Command("ovs-appctl", "-t", m.ctl, "version").Run() == nil {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("ovsdb-server %s did not start", m.args[0])
}

func (m *member) alive() bool {
	return m.cmd != nil && m.cmd.ProcessState == nil && m.cmd.Process.Signal(syscall.Signal(0)) == nil
}

// role is the member's Raft role ("leader", "follower", "candidate").
func (m *member) role() string {
	out, err := exec.Command("ovs-appctl", "-t", m.ctl, "cluster/status", "OVN_Northbound").Output()
	if err != nil {
		return ""
	}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		if r, ok := strings.CutPrefix(sc.Text(), "Role: "); ok {
			return strings.TrimSpace(r)
		}
	}
	return ""
}

// Leader is the index in NB of the Raft leader, or -1.
func (o *OVN) Leader() int {
	for i, m := range o.nb {
		if m.alive() && m.role() == "leader" {
			return i
		}
	}
	return -1
}

func (o *OVN) waitLeader(d time.Duration) error {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if o.Leader() >= 0 {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("no Raft leader within %s", d)
}

// KillLeader kills the Raft leader with SIGKILL (no goodbye to its peers),
// waits until the others have elected a new one and returns the killed
// member's index.
func (o *OVN) KillLeader(t testing.TB) int {
	t.Helper()
	i := o.Leader()
	if i < 0 {
		t.Fatal("no Raft leader to kill")
	}
	_ = o.nb[i].cmd.Process.Kill()
	for o.nb[i].alive() {
		time.Sleep(10 * time.Millisecond)
	}
	if err := o.waitLeader(20 * time.Second); err != nil {
		t.Fatal(err)
	}
	return i
}

// Restart starts a killed member again; it rejoins the cluster.
func (o *OVN) Restart(t testing.TB, i int) {
	t.Helper()
	if err := o.nb[i].startProcess(o.dir); err != nil {
		t.Fatal(err)
	}
}

// NBCtl runs ovn-nbctl against the Northbound database.
func (o *OVN) NBCtl(t testing.TB, args ...string) string {
	t.Helper()
	return ctl(t, "ovn-nbctl", strings.Join(o.NB, ","), args...)
}

// SBCtl runs ovn-sbctl against the Southbound database.
func (o *OVN) SBCtl(t testing.TB, args ...string) string {
	t.Helper()
	return ctl(t, "ovn-sbctl", o.SB, args...)
}

func ctl(t testing.TB, bin, db string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, append([]string{"--timeout=20", "--db=" + db}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v: %s", bin, strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// Stop kills every process.
func (o *OVN) Stop() {
	if o.northd != nil && o.northd.Process != nil {
		_ = o.northd.Process.Kill()
		_ = o.northd.Wait()
	}
	for _, m := range append(o.nb, o.sb) {
		if m != nil && m.alive() {
			_ = m.cmd.Process.Kill()
		}
	}
}

func run(bin string, args ...string) error {
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %v: %s", bin, strings.Join(args, " "), err, out)
	}
	return nil
}

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
