package packaging

import (
	"archive/tar"
	"debug/elf"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// images is where `make xpkg` writes the node agents' images.
var images = filepath.Join("..", "..", "_output", "images")

// TestImagesIntegration checks every runtime image `make xpkg` builds (the
// functions' and the provider's, embedded in their packages, and the node
// agents'): each runs as the non-root user 65532, every file in it is
// root's and read-only, it carries a CA bundle, the provider links librados
// (its Ceph kinds work); and its entrypoint, unpacked and run under chroot
// as that user, starts: a cgo binary whose image lacks a library it links,
// or the loader, fails here.
func TestImagesIntegration(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: skipped with -short")
	}
	_, errPkgs := os.Stat(dir)
	_, errImgs := os.Stat(images)
	if errPkgs != nil || errImgs != nil || os.Geteuid() != 0 {
		msg := "needs the packages and agent images (`make xpkg`) and root (chroot)"
		if os.Getenv("REQUIRE_INTEGRATION") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	cases := []struct {
		file, entrypoint, helpSays string
		links                      []string
	}{
		{filepath.Join(dir, "function-controlplane-cluster.xpkg"), "/function", "--address", nil},
		{filepath.Join(dir, "function-hypervisor-cluster.xpkg"), "/function", "--address", nil},
		{filepath.Join(dir, "function-storage-cluster.xpkg"), "/function", "--address", nil},
		{filepath.Join(dir, "function-openstack-cluster.xpkg"), "/function", "--address", nil},
		{filepath.Join(dir, "provider-cobaltcore.xpkg"), "/provider", "-openstack-session-cache", []string{"librados.so.2"}},
		{filepath.Join(images, "hypervisor-agent.tar"), "/hypervisor-agent", "-node-name", []string{"libvirt.so.0"}},
		{filepath.Join(images, "ha-agent.tar"), "/ha-agent", "-node-name", []string{"libvirt.so.0"}},
		{filepath.Join(images, "ovs-agent.tar"), "/ovs-agent", "-node-name", nil},
		{filepath.Join(images, "storage-agent.tar"), "/storage-agent", "-node-name", []string{"librados.so.2"}},
	}
	for _, c := range cases {
		t.Run(filepath.Base(c.file), func(t *testing.T) {
			img, err := tarball.ImageFromPath(c.file, nil)
			if err != nil {
				t.Fatal(err)
			}
			cf, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(cf.Config.Entrypoint, " "); got != c.entrypoint {
				t.Fatalf("entrypoint %q, want %q", got, c.entrypoint)
			}
			if cf.Config.User != "65532:65532" {
				t.Errorf("runs as %q, want the non-root 65532:65532", cf.Config.User)
			}
			root := unpack(t, img)
			if b, err := os.ReadFile(filepath.Join(root, "etc/ssl/certs/ca-certificates.crt")); err != nil || !strings.Contains(string(b), "BEGIN CERTIFICATE") {
				t.Errorf("no CA bundle at /etc/ssl/certs/ca-certificates.crt: %v", err)
			}
			if len(c.links) > 0 {
				f, err := elf.Open(filepath.Join(root, c.entrypoint))
				if err != nil {
					t.Fatal(err)
				}
				libs, _ := f.ImportedLibraries()
				_ = f.Close()
				for _, l := range c.links {
					if !slices.Contains(libs, l) {
						t.Errorf("%s does not link %s (it links %v)", c.entrypoint, l, libs)
					}
				}
			}
			// -h prints the flags and exits 0 once the binary is loaded and runs.
			out, err := exec.Command("chroot", "--userspec=65532:65532", root, c.entrypoint, "-h").CombinedOutput()
			if err != nil || !strings.Contains(string(out), c.helpSays) {
				t.Fatalf("chroot --userspec=65532:65532 %s %s -h: %v\n%s", root, c.entrypoint, err, out)
			}
		})
	}
}

// unpack writes the image's filesystem into a directory, failing on a file
// that is not root's or that anyone may write: the image's own files are
// what its process must not be able to change.
func unpack(t *testing.T, img v1.Image) string {
	t.Helper()
	root := t.TempDir()
	// The test writes the tree as root; the binary runs as 65532 and must
	// reach its files through it.
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	r := mutate.Extract(img)
	defer r.Close()
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return root
		} else if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(root, filepath.Clean("/"+h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			// package.yaml and .up/ are the package's own layers (crossplane
			// xpkg build writes them: metadata, examples), which core reads
			// and the process never sees.
			pkgLayer := h.Name == "package.yaml" || strings.HasPrefix(h.Name, ".up/")
			if !pkgLayer && (h.Uid != 0 || h.Gid != 0 || h.Mode&0o222 != 0) {
				t.Errorf("%s is %d:%d mode %o, want root's and read-only", h.Name, h.Uid, h.Gid, h.Mode)
			}
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY, os.FileMode(h.Mode)) //nolint:gosec // our own image
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(f, tr); err != nil { //nolint:gosec // our own image
				t.Fatal(err)
			}
			_ = f.Close()
		}
	}
}
