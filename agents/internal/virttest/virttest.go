//go:build libvirt

// Package virttest gives the agents' tests real libvirt: the in-process
// test driver (test:///default, no daemon) and a libvirtd started without
// the qemu driver on a private socket, serving the same test driver over
// libvirt's remote protocol as a hypervisor's daemon would.
package virttest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"libvirt.org/go/libvirt"
)

// Require skips the test (or fails it under REQUIRE_INTEGRATION, as in
// `make test`) with how to get what is missing.
func Require(t testing.TB, ok bool, what string) {
	t.Helper()
	if ok {
		return
	}
	msg := what + " is missing: install it with `make agents-deps` (Debian libvirt-daemon, libvirt-dev)"
	if os.Getenv("REQUIRE_INTEGRATION") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// Libvirtd is a running libvirtd without the qemu driver.
type Libvirtd struct {
	Dir  string
	bin  string
	cmd  *exec.Cmd
	sock string
}

// URI is the remote URI of the daemon's default test driver.
func (d *Libvirtd) URI() string { return "test+unix:///default?socket=" + d.sock }

// ReadOnlyURI is the same driver through the daemon's read-only socket, the
// one a hypervisor's libvirtd opens to everyone (libvirt-sock-ro).
func (d *Libvirtd) ReadOnlyURI() string { return "test+unix:///default?socket=" + d.sock + "-ro" }

// StartLibvirtd starts libvirtd with only the drivers the agents need
// loadable (no qemu: there is no hypervisor here) and stops it when the test
// ends.
func StartLibvirtd(t testing.TB) *Libvirtd {
	t.Helper()
	bin, err := exec.LookPath("libvirtd")
	if err != nil {
		for _, p := range []string{"/usr/sbin/libvirtd", "/usr/local/sbin/libvirtd"} {
			if _, serr := os.Stat(p); serr == nil {
				bin, err = p, nil
				break
			}
		}
	}
	Require(t, err == nil, "libvirtd")
	// The socket path must stay short (108 bytes for a unix socket).
	dir, err := os.MkdirTemp("", "lvd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	d := &Libvirtd{Dir: dir, bin: bin, sock: filepath.Join(dir, "run", "libvirt-sock")}
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Kill)
	return d
}

// Start (re)starts the daemon in d.Dir (after Kill: a fresh test driver).
func (d *Libvirtd) Start() error {
	drivers := filepath.Join(d.Dir, "drivers")
	for _, p := range []string{filepath.Join(d.Dir, "run"), drivers} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			return err
		}
	}
	conf := fmt.Sprintf(`unix_sock_dir = %q
unix_sock_rw_perms = "0770"
unix_sock_ro_perms = "0777"
auth_unix_rw = "none"
auth_unix_ro = "none"
log_outputs = "3:file:%s/libvirtd.log"
`, filepath.Join(d.Dir, "run"), d.Dir)
	if err := os.WriteFile(filepath.Join(d.Dir, "libvirtd.conf"), []byte(conf), 0o644); err != nil {
		return err
	}
	d.cmd = exec.Command(d.bin, "--config", filepath.Join(d.Dir, "libvirtd.conf"), "--pid-file", filepath.Join(d.Dir, "libvirtd.pid"))
	// An empty driver directory keeps qemu (and every other loadable
	// hypervisor driver) out; the test driver is built into libvirtd.
	d.cmd.Env = append(os.Environ(), "LIBVIRT_DRIVER_DIR="+drivers)
	d.cmd.Stdout, d.cmd.Stderr = os.Stderr, os.Stderr
	if err := d.cmd.Start(); err != nil {
		return fmt.Errorf("cannot start libvirtd: %w", err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := libvirt.NewConnect(d.URI()); err == nil {
			_, _ = c.Close()
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	log, _ := os.ReadFile(filepath.Join(d.Dir, "libvirtd.log"))
	d.Kill()
	return fmt.Errorf("libvirtd did not serve %s within 20s; its log:\n%s", d.sock, tail(string(log), 20))
}

// Kill stops the daemon abruptly, as a crash would.
func (d *Libvirtd) Kill() {
	if d.cmd != nil && d.cmd.Process != nil {
		_ = d.cmd.Process.Kill()
		_ = d.cmd.Wait()
		d.cmd = nil
	}
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// DomainXML is a test-driver domain.
func DomainXML(name, uuid string, vcpus, memMiB int) string {
	return fmt.Sprintf(`<domain type='test'><name>%s</name><uuid>%s</uuid><memory unit='MiB'>%d</memory>`+
		`<currentMemory unit='MiB'>%d</currentMemory><vcpu>%d</vcpu><os><type>hvm</type></os></domain>`, name, uuid, memMiB, memMiB, vcpus)
}
