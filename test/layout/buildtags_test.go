package layout

import (
	"regexp"
	"strings"
	"testing"
)

// goTagsFlag is a go command's -tags flag and its value, in a Makefile
// recipe, a script, or a Go exec.Command's arguments.
var goTagsFlag = regexp.MustCompile(`-tags"?,?\s*=?\s*("[^"]*"|'[^']*'|\S+)`)

// goCommand is a line that runs the go command.
var goCommand = regexp.MustCompile(`(^|[\s;(&|"])go(\s+-C\s+\S+)?\s+(build|test|vet|run|list)\b|exec\.Command(Context)?\([^)]*"go",`)

// sharedTags is what a -tags value must hold so that the build shares its
// packages with every other build of the project: the Makefile's GO_TAGS
// (netgo,osusergo), literally or through a variable built from it.
var sharedTags = regexp.MustCompile(`netgo,osusergo|GO_TAGS|CEPH_TAGS|AGENT_TAGS|\$\{?tags\b`)

// untaggedBuilds returns the lines of a file that run the go command with
// -tags but without the Makefile's GO_TAGS. A command line's -tags
// replaces GOFLAGS' -tags=netgo,osusergo, and without those two a cgo
// build compiles net and os/user, and with them every package above,
// differently from the static (CGO_ENABLED=0) builds: a cold build
// compiles the project's dependencies twice.
func untaggedBuilds(text string) []string {
	var found []string
	for _, line := range strings.Split(text, "\n") {
		code := strings.TrimSpace(line)
		if strings.HasPrefix(code, "#") || strings.HasPrefix(code, "//") || !goCommand.MatchString(code) {
			continue
		}
		for _, m := range goTagsFlag.FindAllStringSubmatch(code, -1) {
			if !sharedTags.MatchString(m[1]) {
				found = append(found, code)
			}
		}
	}
	return found
}

// TestGoTagsEverywhere: every go command of the project (but the cases of
// TestGoTagsRuleFails below) that sets its own -tags keeps GO_TAGS, and the
// Makefile's tag sets are built from it, so that tests, vet and the static
// and cgo binaries compile one set of packages.
func TestGoTagsEverywhere(t *testing.T) {
	files := trackedFiles(t, 50, "Makefile", "*.sh", ".ci/run", "*.go", ":!:tools/upstream/*", ":!:test/layout/buildtags_test.go")
	for f, text := range files {
		for _, l := range untaggedBuilds(text) {
			t.Errorf("%s: %q sets -tags without GO_TAGS (netgo,osusergo): add them, or it compiles every package a second time", f, l)
		}
	}

	mk := files["Makefile"]
	for _, want := range []string{
		"export GO_TAGS := netgo,osusergo",
		"-tags=$(GO_TAGS))",
		"CEPH_TAGS := $(GO_TAGS),",
		"AGENT_TAGS := libvirt,$(CEPH_TAGS)",
	} {
		if !strings.Contains(mk, want) {
			t.Errorf("Makefile: no %q: every tag set is built from GO_TAGS", want)
		}
	}
}

// TestGoTagsRuleFails: the rule finds the lines that compiled the
// dependencies twice, and not their fixes.
func TestGoTagsRuleFails(t *testing.T) {
	ruleCases(t, untaggedBuilds, map[string]string{
		"make":     "\tgo vet -tags e2e ./test/e2e/",
		"script":   `CGO_ENABLED=1 go build -tags ceph,pacific -trimpath -o bin/provider ./provider/cmd/provider`,
		"go -C":    `  go -C agents build -tags libvirt,ceph,pacific -trimpath ./cmd/x`,
		"exec":     `build := exec.Command("go", "build", "-tags", "libvirt,ceph,pacific", "-o", dir+"/", "./cmd/...")`,
		"quoted":   `go test -c -tags "e2e" -o x ./test/e2e`,
		"equals":   `go test -tags=ceph ./...`,
		"two, one": "go test -tags $(CEPH_TAGS) ./a && go test -tags ceph ./b",
	}, map[string]string{
		"make":      "\tgo vet -tags $(GO_TAGS),e2e ./test/e2e/",
		"ceph":      "\tgo test -short -count=1 -tags $(CEPH_TAGS) ./...",
		"script":    `CGO_ENABLED=1 go build -tags "$tags,ceph,pacific" -trimpath ./provider/cmd/provider`,
		"default":   `go test -c -tags "${GO_TAGS:-netgo,osusergo},e2e" -o x ./test/e2e`,
		"exec":      `exec.Command("go", "build", "-tags", "netgo,osusergo,libvirt,ceph,pacific", "./cmd/...")`,
		"no -tags":  "go build -o bin/ ./functions/...",
		"not go":    "ceph osd pool set x -tags y",
		"a comment": "# go build -tags ceph was here",
		"GOFLAGS":   "export GOFLAGS := $(strip $(filter-out -trimpath -tags=%,$(GOFLAGS)) -trimpath -tags=$(GO_TAGS))",
	})
}
