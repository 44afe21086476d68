package packaging

import (
	"archive/tar"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// images is where `make xpkg` writes the node agents' images.
var images = filepath.Join("..", "..", "_output", "images")

// TestAgentImagesIntegration unpacks each agent image into a directory and
// runs its entrypoint there under chroot: a cgo agent whose image lacks a
// library it links, or the loader, fails to start.
func TestAgentImagesIntegration(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: skipped with -short")
	}
	if _, err := os.Stat(images); err != nil || os.Geteuid() != 0 {
		msg := "needs the agent images (`make xpkg`) and root (chroot)"
		if os.Getenv("REQUIRE_INTEGRATION") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	for _, agent := range []string{"hypervisor-agent", "ha-agent", "ovs-agent", "storage-agent"} {
		t.Run(agent, func(t *testing.T) {
			img, err := tarball.ImageFromPath(filepath.Join(images, agent+".tar"), nil)
			if err != nil {
				t.Fatal(err)
			}
			cf, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(cf.Config.Entrypoint, " "); got != "/"+agent {
				t.Fatalf("entrypoint %q", got)
			}
			root := t.TempDir()
			r := mutate.Extract(img)
			defer r.Close()
			tr := tar.NewReader(r)
			for {
				h, err := tr.Next()
				if errors.Is(err, io.EOF) {
					break
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
					if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
						t.Fatal(err)
					}
					f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY, os.FileMode(h.Mode))
					if err != nil {
						t.Fatal(err)
					}
					if _, err := io.Copy(f, tr); err != nil { //nolint:gosec // our own image
						t.Fatal(err)
					}
					_ = f.Close()
				}
			}
			// -h prints the flags and exits 0 once the binary is loaded and runs.
			out, err := exec.Command("chroot", root, "/"+agent, "-h").CombinedOutput()
			if err != nil || !strings.Contains(string(out), "-node-name") {
				t.Fatalf("chroot %s /%s -h: %v\n%s", root, agent, err, out)
			}
		})
	}
}
