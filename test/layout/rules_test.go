package layout

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// trackedFiles reads the files git tracks under the pathspecs, by path;
// fewer than atLeast means the listing is wrong, and fails the test.
func trackedFiles(t *testing.T, atLeast int, pathspecs ...string) map[string]string {
	t.Helper()
	root := repoRoot(t)
	cmd := exec.Command("git", append([]string{"ls-files"}, pathspecs...)...)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	files := map[string]string{}
	for _, f := range strings.Fields(string(out)) {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		files[f] = string(b)
	}
	if len(files) < atLeast {
		t.Fatalf("git ls-files %v: %d files; the listing is wrong", pathspecs, len(files))
	}
	return files
}

// ruleCases checks a line rule against its cases: it finds exactly one
// line in each bad text and nothing in each ok one.
func ruleCases(t *testing.T, rule func(string) []string, bad, ok map[string]string) {
	t.Helper()
	for name, text := range bad {
		if got := rule(text); len(got) != 1 {
			t.Errorf("%s: found %q in %q, want the line", name, got, text)
		}
	}
	for name, text := range ok {
		if got := rule(text); len(got) != 0 {
			t.Errorf("%s: found %q, want nothing", name, got)
		}
	}
}
