package gitserver

import (
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A repository pushed over the server is cloned back over it with the
// commit: what Flux's source-controller and the e2e's commits do, with the
// real git and git-http-backend.
func TestPushAndClone(t *testing.T) {
	const backend = Backend
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git: apt-get install git")
	}
	if _, err := os.Stat(backend); err != nil {
		t.Skip("no " + backend + ": apt-get install git")
	}
	dir := t.TempDir()
	git := func(cwd string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.org", "-c", "init.defaultBranch=main"}, args...)...)
		cmd.Dir = cwd
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	root := filepath.Join(dir, "repos")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	git(root, "init", "-q", "--bare", "gitops.git")
	srv := httptest.NewServer(Handler(root, backend))
	defer srv.Close()

	work := filepath.Join(dir, "work")
	git(dir, "clone", "-q", srv.URL+"/gitops.git", work)
	if err := os.WriteFile(filepath.Join(work, "claim.yaml"), []byte("kind: OpenStackCluster\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(work, "add", "-A")
	git(work, "commit", "-qm", "a claim")
	git(work, "push", "-q", "origin", "HEAD:main")

	back := filepath.Join(dir, "back")
	git(dir, "clone", "-q", "-b", "main", srv.URL+"/gitops.git", back)
	if got := git(back, "log", "--format=%s"); strings.TrimSpace(got) != "a claim" {
		t.Fatalf("cloned history is %q, want the pushed commit", got)
	}
	if _, err := os.Stat(filepath.Join(back, "claim.yaml")); err != nil {
		t.Fatalf("the pushed file is not in the clone: %v", err)
	}
}
