package layout

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// readmeMaxLines keeps the README something a newcomer reads at once; the
// rest lives in docs/ and is linked from it.
const readmeMaxLines = 200

var (
	// inlineLink is [text](target) or ![alt](target), target up to a space or ")".
	inlineLink = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	// refLink is a reference definition: [label]: target
	refLink   = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s+(\S+)`)
	codeSpan  = regexp.MustCompile("`[^`]*`")
	heading   = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	notInSlug = regexp.MustCompile(`[^\p{L}\p{N}\- _]`)
)

// prose returns the lines of a Markdown document outside fenced code blocks,
// where links and headings are what they look like.
func prose(doc string) []string {
	var out []string
	fenced := false
	for _, line := range strings.Split(doc, "\n") {
		if t := strings.TrimSpace(line); strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fenced = !fenced
			continue
		}
		if !fenced {
			out = append(out, line)
		}
	}
	return out
}

// links returns the link targets of a Markdown document, outside code
// blocks and code spans.
func links(doc string) []string {
	var out []string
	for _, line := range prose(doc) {
		line = codeSpan.ReplaceAllString(line, "")
		for _, m := range inlineLink.FindAllStringSubmatch(line, -1) {
			out = append(out, m[1])
		}
		if m := refLink.FindStringSubmatch(line); m != nil {
			out = append(out, m[1])
		}
	}
	return out
}

// anchors returns the fragment each heading of a Markdown document gets, as
// GitHub makes them: lower case, punctuation dropped, spaces to hyphens, and
// -1, -2… for repeated headings.
func anchors(doc string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, line := range prose(doc) {
		m := heading.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		text := strings.NewReplacer("`", "", "*", "").Replace(m[1])
		slug := strings.ReplaceAll(notInSlug.ReplaceAllString(strings.ToLower(text), ""), " ", "-")
		if n := seen[slug]; n > 0 {
			out[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out
}

// broken returns, for the Markdown document at path (relative to root), every
// link to this repository that does not resolve: a missing file or folder, or
// a fragment that names no heading of the Markdown file it points into.
func broken(root, path string) ([]string, error) {
	doc, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		return nil, err
	}
	var bad []string
	for _, l := range links(string(doc)) {
		if strings.Contains(l, "://") || strings.HasPrefix(l, "mailto:") {
			continue // outside the repository: not checked offline
		}
		target, frag, _ := strings.Cut(l, "#")
		file := path
		if target != "" {
			file = filepath.Join(filepath.Dir(path), target)
		}
		if strings.HasPrefix(filepath.Clean(file), "..") {
			bad = append(bad, l+" (leaves the repository)")
			continue
		}
		fi, err := os.Stat(filepath.Join(root, file))
		if err != nil {
			bad = append(bad, l+" (no such file)")
			continue
		}
		if frag == "" || fi.IsDir() || !strings.HasSuffix(file, ".md") {
			continue
		}
		md, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			return nil, err
		}
		if !anchors(string(md))[frag] {
			bad = append(bad, l+" (no heading #"+frag+" in "+file+")")
		}
	}
	return bad, nil
}

func TestLinksAndAnchors(t *testing.T) {
	doc := "# Title\n## The `make` targets\n## Repeated\n## Repeated\n" +
		"[a](docs/x.md#the-make-targets) ![img](pic.png \"t\") `[not](a-link.md)`\n" +
		"```\n[fenced](nope.md)\n# not a heading\n```\n[ref]: https://example.com\n"
	if diff := cmp.Diff([]string{"docs/x.md#the-make-targets", "pic.png", "https://example.com"}, links(doc)); diff != "" {
		t.Errorf("links: -want, +got:\n%s", diff)
	}
	want := map[string]bool{"title": true, "the-make-targets": true, "repeated": true, "repeated-1": true}
	if diff := cmp.Diff(want, anchors(doc)); diff != "" {
		t.Errorf("anchors: -want, +got:\n%s", diff)
	}

	root := t.TempDir()
	for name, body := range map[string]string{
		"README.md":     "[ok](docs/a.md#section) [gone](docs/none.md) [bad anchor](docs/a.md#nope) [self](#top)\n# Top\n",
		"docs/a.md":     "## Section\n[up](../README.md) [out](../../etc/passwd) [web](https://example.com/x)\n",
		"docs/keep.txt": "",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for path, want := range map[string][]string{
		"README.md": {"docs/none.md (no such file)", "docs/a.md#nope (no heading #nope in docs/a.md)"},
		"docs/a.md": {"../../etc/passwd (leaves the repository)"},
	} {
		got, err := broken(root, path)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("broken(%s): -want, +got:\n%s", path, diff)
		}
	}
}

// TestDocsLinksResolve checks every link of every Markdown file in the
// repository (README, docs/, the rooms' READMEs, examples/).
func TestDocsLinksResolve(t *testing.T) {
	root := repoRoot(t)
	cmd := exec.Command("git", "ls-files", "--cached", "--others", "--exclude-standard", "*.md")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	files := strings.Fields(string(out))
	if len(files) < 5 {
		t.Fatalf("found %d Markdown files: the check would pass on nothing", len(files))
	}
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(root, f)); os.IsNotExist(err) {
			continue // deleted in the work tree, not yet in the index
		}
		bad, err := broken(root, f)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range bad {
			t.Errorf("%s: broken link %s", f, b)
		}
	}
}

func TestREADMEReadsAtOnce(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > readmeMaxLines {
		t.Errorf("README.md has %d lines, at most %d: move detail to docs/ and link it", n, readmeMaxLines)
	}
}

// TestSymlinksResolve: a tracked symbolic link must point at a file of the
// repository (a moved file leaves links to it dangling, and the tests that
// read through them fail far from the cause).
func TestSymlinksResolve(t *testing.T) {
	root := repoRoot(t)
	cmd := exec.Command("git", "ls-files", "-s")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	links := 0
	for _, line := range strings.Split(string(out), "\n") {
		mode, path, ok := strings.Cut(line, " ")
		if !ok || mode != "120000" {
			continue
		}
		_, path, _ = strings.Cut(path, "\t")
		links++
		target, err := filepath.EvalSymlinks(filepath.Join(root, path))
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		if rel, err := filepath.Rel(root, target); err != nil || strings.HasPrefix(rel, "..") {
			t.Errorf("%s points outside the repository, at %s", path, target)
		}
	}
	if links == 0 {
		t.Fatal("no symbolic links found: git ls-files -s changed its output, and this check would pass on nothing")
	}
}
