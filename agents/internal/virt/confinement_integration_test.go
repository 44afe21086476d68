//go:build libvirt

package virt

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"

	"github.com/c5c3/consumer-plane/agents/internal/virttest"
)

// The hypervisor agent as it ships: its DaemonSet (internal/agentbundle
// embeds a copy, checked by make check-generate) and its image (make xpkg).
const (
	shippedManifest = "../../../cluster/agents/hypervisor-agent.yaml"
	shippedImage    = "../../../_output/images/hypervisor-agent.tar"
)

// TestIntegrationAgentContainerCannotWrite shows that the hypervisor
// agent's read-only access is its container's confinement, not only its
// flag. A process in the agent's image (its filesystem unpacked, chrooted
// into), with the identity the shipped DaemonSet gives the container (its
// runAsUser, runAsGroup and supplemental groups) and libvirt's socket
// directory mounted where the DaemonSet mounts it, connects as the agent
// does: read-only it gets in; read-write — as the agent would with
// --libvirt-read-only=false — the socket's permissions (those of a
// hypervisor's libvirtd: read-write 0770 to root's group, read-only 0777)
// refuse it. As root, the read-write connection succeeds: were the
// DaemonSet to run the agent as root or in libvirtd's group, this test would
// fail.
func TestIntegrationAgentContainerCannotWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("an integration test: make test-integration runs it")
	}
	if os.Geteuid() != 0 {
		msg := "this test chroots into the agent's image and runs as the container's user, which needs root: run it as root, as make test does"
		if os.Getenv("REQUIRE_INTEGRATION") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	cred, socketDir := containerIdentity(t)
	if socketDir != "/var/run/libvirt" {
		t.Fatalf("the DaemonSet mounts libvirt's socket directory at %q, the agent's qemu:///system looks in /var/run/libvirt", socketDir)
	}
	root := unpackImage(t, shippedImage)
	d := virttest.StartLibvirtd(t)
	mountReadOnly(t, filepath.Join(d.Dir, "run"), filepath.Join(root, socketDir))
	bin := copyInto(t, root)
	rw := "test+unix:///default?socket=" + socketDir + "/libvirt-sock"

	if out, err := connectAs(t, root, bin, cred, rw+"-ro", true); err != nil {
		t.Errorf("in the agent's container, the read-only connection the agent uses failed: %v: %s", err, out)
	}
	if out, err := connectAs(t, root, bin, cred, rw, false); err == nil {
		t.Errorf("in the agent's container (uid %d, gid %d, groups %v), a read-write connection succeeded: %s", cred.Uid, cred.Gid, cred.Groups, out)
	} else if !strings.Contains(out, "Permission denied") {
		t.Errorf("in the agent's container, the read-write connection failed for another reason than the socket's permissions: %s", out)
	}
	// The control: the socket is writable to root, so the refusal above is
	// the container's identity, not a broken daemon or image.
	if out, err := connectAs(t, root, bin, &syscall.Credential{Groups: []uint32{}}, rw, false); err != nil {
		t.Errorf("as root in the agent's image, the read-write connection failed, so the test proves nothing: %v: %s", err, out)
	}
}

// containerIdentity reads the agent container's identity and its libvirt
// mount from the shipped DaemonSet.
func containerIdentity(t *testing.T) (*syscall.Credential, string) {
	t.Helper()
	raw, err := os.ReadFile(shippedManifest)
	if err != nil {
		t.Fatal(err)
	}
	var ds *appsv1.DaemonSet
	for _, doc := range bytes.Split(raw, []byte("\n---\n")) {
		var d appsv1.DaemonSet
		if err := yaml.Unmarshal(doc, &d); err == nil && d.Kind == "DaemonSet" {
			ds = &d
		}
	}
	if ds == nil || len(ds.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("%s has no DaemonSet with one container", shippedManifest)
	}
	pod := ds.Spec.Template.Spec
	c := pod.Containers[0]
	for _, a := range c.Args {
		if strings.HasPrefix(a, "--libvirt-read-only=") && a != "--libvirt-read-only=true" {
			t.Errorf("the DaemonSet runs the agent with %s", a)
		}
	}
	sc := c.SecurityContext
	if sc == nil || sc.RunAsUser == nil {
		t.Fatalf("the agent's container sets no runAsUser: it would run as its image's user")
	}
	cred := &syscall.Credential{Uid: uint32(*sc.RunAsUser)} //nolint:gosec // a uid
	if sc.RunAsGroup != nil {
		cred.Gid = uint32(*sc.RunAsGroup) //nolint:gosec // a gid
	}
	if psc := pod.SecurityContext; psc != nil {
		for _, g := range psc.SupplementalGroups {
			cred.Groups = append(cred.Groups, uint32(g)) //nolint:gosec // a gid
		}
		if psc.FSGroup != nil {
			cred.Groups = append(cred.Groups, uint32(*psc.FSGroup)) //nolint:gosec // a gid
		}
	}
	if cred.Groups == nil {
		cred.Groups = []uint32{}
	}
	var mountPath string
	for _, m := range c.VolumeMounts {
		for _, v := range pod.Volumes {
			if v.Name == m.Name && v.HostPath != nil && v.HostPath.Path == "/var/run/libvirt" {
				mountPath = m.MountPath
			}
		}
	}
	return cred, mountPath
}

// unpackImage writes an image tarball's filesystem (make xpkg's docker
// archive: manifest.json naming gzipped layers) into a directory.
func unpackImage(t *testing.T, image string) string {
	t.Helper()
	f, err := os.Open(image)
	if err != nil {
		msg := fmt.Sprintf("the agent's image %s: %v: build it with make xpkg", image, err)
		if os.Getenv("REQUIRE_INTEGRATION") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	defer f.Close() //nolint:errcheck // read only
	entries := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if entries[h.Name], err = io.ReadAll(tr); err != nil {
			t.Fatal(err)
		}
	}
	var manifest []struct{ Layers []string }
	if err := json.Unmarshal(entries["manifest.json"], &manifest); err != nil || len(manifest) != 1 {
		t.Fatalf("%s: manifest.json: %v", image, err)
	}
	root := t.TempDir()
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, l := range manifest[0].Layers {
		gz, err := gzip.NewReader(bytes.NewReader(entries[l]))
		if err != nil {
			t.Fatalf("%s: layer %s: %v", image, l, err)
		}
		lr := tar.NewReader(gz)
		for {
			h, err := lr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(root, filepath.Clean("/"+h.Name))
			switch h.Typeflag {
			case tar.TypeDir:
				err = os.MkdirAll(p, os.FileMode(h.Mode).Perm()) //nolint:gosec // a mode
			case tar.TypeReg:
				var b []byte
				if b, err = io.ReadAll(lr); err == nil {
					err = os.WriteFile(p, b, os.FileMode(h.Mode).Perm()) //nolint:gosec // a mode
				}
			case tar.TypeSymlink:
				err = os.Symlink(h.Linkname, p)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	return root
}

// mountReadOnly bind-mounts src at dst read-only, as the DaemonSet's
// hostPath volume is mounted (readOnly: true), until the test ends.
func mountReadOnly(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount(src, dst, "", syscall.MS_BIND, ""); err != nil {
		t.Fatalf("bind-mounting %s at %s: %v", src, dst, err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dst, syscall.MNT_DETACH) })
	if err := syscall.Mount("", dst, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
		t.Fatalf("remounting %s read-only: %v", dst, err)
	}
}

// copyInto copies this test binary into the image's filesystem, where it
// runs on the image's libraries and user database; it returns its path
// there.
func copyInto(t *testing.T, root string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(self) //nolint:gosec // this test binary
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "virt.test"), b, 0o555); err != nil { //nolint:gosec // run by the container's user
		t.Fatal(err)
	}
	return "/virt.test"
}

// connectAs runs TestConfinedConnect in bin, chrooted into root as cred,
// which connects to uri through the agent's Watcher and reports the
// outcome.
func connectAs(t *testing.T, root, bin string, cred *syscall.Credential, uri string, readOnly bool) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-test.run=^TestConfinedConnect$", "-test.v")
	cmd.Path = bin
	// What a container without env of its own gets (containerd sets HOME
	// from the image's user database, / when it has none).
	cmd.Env = []string{"CONFINED_CONNECT_URI=" + uri, fmt.Sprintf("CONFINED_CONNECT_READ_ONLY=%t", readOnly), "HOME=/", "PATH=/"}
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root, Credential: cred}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestConfinedConnect is the child of TestIntegrationAgentContainerCannotWrite:
// it connects once, as the agent does, and fails if it cannot.
func TestConfinedConnect(t *testing.T) {
	uri := os.Getenv("CONFINED_CONNECT_URI")
	if uri == "" {
		t.Skip("run by TestIntegrationAgentContainerCannotWrite")
	}
	done := make(chan error, 1)
	w := &Watcher{URI: uri, ReadOnly: os.Getenv("CONFINED_CONNECT_READ_ONLY") == "true", OnConnection: func(connected bool, err error) {
		if connected {
			err = nil
		}
		select {
		case done <- err:
		default:
		}
	}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = w.Run(ctx) }()
	if err := <-done; err != nil {
		t.Fatalf("as uid %d: %v", os.Getuid(), err)
	}
	fmt.Printf("as uid %d: connected to %s\n", os.Getuid(), uri)
}
