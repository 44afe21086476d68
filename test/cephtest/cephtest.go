// Package cephtest reaches the local Ceph that make ceph-up starts
// (local/ceph/start.sh: one monitor on 127.0.0.1:6789, a manager and a
// memstore OSD): where it runs, its admin key, and the real ceph CLI, the
// tests' own view of what the provider did to it.
package cephtest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// MonHost is the local Ceph's monitor.
const MonHost = "127.0.0.1:6789"

// Run is the local Ceph's directory (COBALTCORE_CEPH_RUN, as for
// make ceph-up, or /tmp/cobaltcore-ceph): its ceph.conf, keyring and
// admin.key.
func Run() string {
	if d := os.Getenv("COBALTCORE_CEPH_RUN"); d != "" {
		return d
	}
	return "/tmp/cobaltcore-ceph"
}

// AdminKey returns the key of client.admin, or an error saying how to
// start the local Ceph when it does not run.
func AdminKey() (string, error) {
	key, err := os.ReadFile(filepath.Join(Run(), "admin.key"))
	if err == nil {
		_, err = CLI("status")
	}
	if err != nil {
		return "", fmt.Errorf("needs the local Ceph (%w): run `make ceph-up` (local/ceph/install.sh as root, then start.sh)", err)
	}
	return strings.TrimSpace(string(key)), nil
}

// CLI runs the ceph CLI against the local Ceph (at most 30 s) and returns
// its standard output; an error carries its standard error.
func CLI(args ...string) (string, error) { return CLIAt(Run(), args...) }

// CLIAt runs the ceph CLI against the Ceph whose directory is dir.
func CLIAt(dir string, args ...string) (string, error) {
	var stderr bytes.Buffer
	cmd := exec.Command("timeout", append([]string{"30", "ceph", "-c", filepath.Join(dir, "ceph.conf")}, args...)...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("ceph %s: %w: %s%s", strings.Join(args, " "), err, out, stderr.Bytes())
	}
	return string(out), nil
}
