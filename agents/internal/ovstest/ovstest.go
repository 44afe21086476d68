// Package ovstest starts a real ovsdb-server with the Open_vSwitch schema
// (Debian's openvswitch-switch) for the OVS agent's tests, and drives it
// with ovs-vsctl as an operator or os-net-config would.
package ovstest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Schema is where Debian's openvswitch-switch installs the Open_vSwitch schema.
const Schema = "/usr/share/openvswitch/vswitch.ovsschema"

// Server is a running ovsdb-server.
type Server struct {
	Dir  string
	Sock string
	cmd  *exec.Cmd
}

// Endpoint is the libovsdb endpoint of the server.
func (s *Server) Endpoint() string { return "unix:" + s.Sock }

// Start runs ovsdb-server on a fresh, initialised Open_vSwitch database and
// stops it when the test ends. It skips (fails under REQUIRE_INTEGRATION)
// when Open vSwitch is not installed.
func Start(t testing.TB) *Server {
	t.Helper()
	_, errSrv := exec.LookPath("ovsdb-server")
	_, errCtl := exec.LookPath("ovs-vsctl")
	_, errSchema := os.Stat(Schema)
	if errSrv != nil || errCtl != nil || errSchema != nil {
		msg := "needs ovsdb-server, ovs-vsctl and " + Schema + ": install Debian's openvswitch-switch (`make agents-deps`)"
		if os.Getenv("REQUIRE_INTEGRATION") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	dir, err := os.MkdirTemp("", "ovs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	s := &Server{Dir: dir, Sock: filepath.Join(dir, "db.sock")}
	db := filepath.Join(dir, "conf.db")
	if out, err := exec.Command("ovsdb-tool", "create", db, Schema).CombinedOutput(); err != nil {
		t.Fatalf("ovsdb-tool create: %v: %s", err, out)
	}
	s.cmd = exec.Command("ovsdb-server", db, "--remote=punix:"+s.Sock, "--unixctl="+filepath.Join(dir, "ctl"),
		"--pidfile="+filepath.Join(dir, "pid"), "--log-file="+filepath.Join(dir, "ovsdb-server.log"))
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.cmd.Process.Kill(); _ = s.cmd.Wait() })
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(s.Sock); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("ovsdb-server did not open its socket within 10s")
		}
	}
	s.Vsctl(t, "init")
	return s
}

// Vsctl runs ovs-vsctl against the server without waiting for
// ovs-vswitchd (there is none: the database is what the agent reads).
func (s *Server) Vsctl(t testing.TB, args ...string) string {
	t.Helper()
	out, err := exec.Command("ovs-vsctl", append([]string{"--db=unix:" + s.Sock, "--no-wait", "--timeout=10"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("ovs-vsctl %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// String names the server in messages.
func (s *Server) String() string { return fmt.Sprintf("ovsdb-server at %s", s.Sock) }
