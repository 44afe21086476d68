package layout

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const module = "github.com/c5c3/consumer-plane"

// notShipped are the rooms whose code never reaches a package's image: the
// local landscape the demo runs, the build tooling, the test harness.
var notShipped = []string{module + "/local/", module + "/tools/", module + "/test/"}

// modules are the Go modules of the repository, each listed with every build
// tag its packages are built with (tools/packaging/build.sh), so that the
// check sees the cgo code too.
var modules = []struct{ dir, tags string }{{".", "ceph,pacific"}, {"agents", "libvirt,ceph,pacific"}}

// shipped are the binaries the packages carry (tools/packaging/build.sh). The
// test also finds every other main outside the rooms above, so a new binary
// is checked without being listed; this list makes sure the known ones are
// never silently dropped.
var shipped = []string{
	module + "/functions/controlplanecluster",
	module + "/functions/hypervisorcluster",
	module + "/functions/openstackcluster",
	module + "/functions/storagecluster",
	module + "/provider/cmd/provider",
	module + "/agents/cmd/ovs-agent",
	module + "/agents/cmd/hypervisor-agent",
	module + "/agents/cmd/ha-agent",
	module + "/agents/cmd/storage-agent",
}

// forbidden returns the packages of deps that live in a room that does not ship.
func forbidden(deps []string) []string {
	var bad []string
	for _, d := range deps {
		for _, room := range notShipped {
			if strings.HasPrefix(d+"/", room) {
				bad = append(bad, d)
			}
		}
	}
	return bad
}

func TestForbidden(t *testing.T) {
	deps := []string{
		"fmt",
		module + "/internal/pool",
		module + "/local/garden",
		module + "/tools/render",
		module + "/test/kubetest",
		module + "/localfoo", // a sibling whose name only starts like a room
		"example.com/other/local/garden",
	}
	want := []string{module + "/local/garden", module + "/tools/render", module + "/test/kubetest"}
	if diff := cmp.Diff(want, forbidden(deps)); diff != "" {
		t.Errorf("forbidden(...): -want, +got:\n%s", diff)
	}
}

// TestShippedBinariesImportNoStandIn fails when a binary that ships in a
// package links code of the local landscape, the build tooling or the test
// harness: a stand-in is for the demo, never for a landscape.
func TestShippedBinariesImportNoStandIn(t *testing.T) {
	root := repoRoot(t)
	type main struct{ dir, pkg, tags string }
	var mains []main
	var names []string
	for _, m := range modules {
		out := goList(t, filepath.Join(root, m.dir), "-tags", m.tags, "-f", `{{if eq .Name "main"}}{{.ImportPath}}{{end}}`, "./...")
		for _, p := range out {
			if len(forbidden([]string{p})) == 0 {
				mains = append(mains, main{m.dir, p, m.tags})
				names = append(names, p)
			}
		}
	}
	for _, s := range shipped {
		if !slices.Contains(names, s) {
			t.Errorf("shipped binary %s is not a main package any more: update this test with the packages' build (tools/packaging/build.sh)", s)
		}
	}
	for _, m := range mains {
		deps := goList(t, filepath.Join(root, m.dir), "-deps", "-tags", m.tags, "-f", "{{.ImportPath}}", m.pkg)
		if len(deps) < 10 {
			t.Fatalf("go list -deps %s listed %d packages: the check would pass on nothing", m.pkg, len(deps))
		}
		for _, bad := range forbidden(deps) {
			t.Errorf("%s links %s, which does not ship: move what it needs to internal/ (see internal/README.md)", m.pkg, bad)
		}
	}
}

func goList(t *testing.T, dir string, args ...string) []string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s in %s: %v\n%s", strings.Join(args, " "), dir, err, stderr.String())
	}
	return strings.Fields(string(out))
}

// repoRoot is two levels above the package's directory, where go test runs
// it (runtime.Caller would name the module's path under -trimpath).
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}
