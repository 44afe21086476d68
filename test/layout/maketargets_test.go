package layout

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// On a fresh machine a Make target runs only what its own dependency chain
// installed: `make demo` once stopped after 45 minutes because `make xpkg`
// needed crushtool, which only `make ceph-up` installs, and CI did not see it
// because it installs every package before it runs a target. This check reads
// the Makefile and the scripts each target runs and fails when a target uses a
// command (or builds with a cgo tag) without depending on what installs it.

// installers are the scripts that put things on a machine, each with what a
// target can use once it ran, the first of them the one whose presence says
// that the script ran. A target depends on an installer when its
// recipe, a script its recipe runs, or a target it depends on (transitively)
// runs the script.
var installers = map[string][]string{
	"local/ceph/install.sh": {"ceph", "ceph-mon", "ceph-mgr", "ceph-osd", "ceph-authtool", "monmaptool", "crushtool", "rbd", "uuidgen",
		"tag:ceph"},
	"local/openstack/install.sh": {"keystone-manage", "uwsgi", "openstack", "nova-manage", "cinder-manage", "neutron-db-manage", "neutron-server",
		"placement-manage", "mariadb", "memcached", "ovn-northd", "ovn-nbctl", "ovn-sbctl", "ovsdb-tool", "ovsdb-server", "nova-api", "cinder-api"},
	"local/agents/install.sh":   {"libvirtd", "ovs-vsctl", "ovs-vswitchd", "ovsdb-server", "ovsdb-tool", "tag:ceph", "tag:libvirt"},
	"local/node/install.sh":     {"containerd", "runc", "ctr", "iptables", "conntrack"},
	"local/registry/install.sh": {"docker-registry"},
	// The pinned upstream binaries, used through the variables
	// `tools/upstream/build.sh --env` exports (filled in by toolVariables):
	// all of them (make tools), or what make test needs (make tools-test).
	"tools/upstream/build.sh":      nil,
	"tools/upstream/build.sh test": nil,
}

// planeTools are the tools' variables only `tools/upstream/build.sh all`
// (make tools) provides: the local management plane's binaries.
var planeTools = []string{"var:KUBE_CONTROLLER_MANAGER", "var:KUBE_SCHEDULER", "var:KUBE_PROXY", "var:KUBELET"}

// cgoTags are the build tags whose cgo code needs a Debian package's headers,
// by how the Makefile and the scripts spell them.
var cgoTags = map[string]*regexp.Regexp{
	"tag:ceph":    regexp.MustCompile(`\$\(CEPH_TAGS\)|\$\(AGENT_TAGS\)|-tags[ =]['"]?[a-z,]*\bceph\b`),
	"tag:libvirt": regexp.MustCompile(`\$\(AGENT_TAGS\)|-tags[ =]['"]?[a-z,]*\blibvirt\b`),
}

// stoppers stop what another target started, and only if it runs: they
// must work on a machine where nothing was installed, and install nothing.
var stoppers = []string{"demo-down", "openstack-down", "ceph-down"}

var (
	makeVariable = regexp.MustCompile(`^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*[:?+]?=`)
	targetLine   = regexp.MustCompile(`^([A-Za-z0-9_-]+):(?:[^=]|$)([^#]*)`)
	scriptRef    = regexp.MustCompile(`\b((?:local|tools|test)/[A-Za-z0-9_./-]+\.(?:sh|py))\b`)
	// envOnly is tools/upstream/build.sh asked where the tools are, which
	// installs nothing.
	envOnly = regexp.MustCompile(`tools/upstream/build\.sh\s+--env`)
	// testTools is tools/upstream/build.sh building only what make test needs.
	testTools = regexp.MustCompile(`tools/upstream/build\.sh\s+test\b`)
)

// makeTarget is one rule of the Makefile.
type makeTarget struct {
	prerequisites []string
	recipe        []string
}

// parseMakefile returns the Makefile's rules by target. The Makefile keeps
// every rule on one line followed by its tab-indented recipe.
func parseMakefile(t *testing.T, path string) (map[string]*makeTarget, map[string]bool) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	targets := map[string]*makeTarget{}
	variables := map[string]bool{}
	var cur *makeTarget
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := s.Text()
		if strings.HasPrefix(line, "\t") {
			if cur != nil {
				cur.recipe = append(cur.recipe, line)
			}
			continue
		}
		cur = nil
		if m := makeVariable.FindStringSubmatch(line); m != nil {
			variables[m[1]] = true
			continue
		}
		m := targetLine.FindStringSubmatch(line)
		if m == nil || strings.HasPrefix(m[1], ".") {
			continue
		}
		cur = &makeTarget{prerequisites: strings.Fields(m[2])}
		targets[m[1]] = cur
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return targets, variables
}

// toolVariables are the names of the variables through which scripts and
// recipes reach the pinned tools.
func toolVariables(t *testing.T, root string) []string {
	t.Helper()
	out, err := exec.Command(filepath.Join(root, "tools/upstream/build.sh"), "--env").Output()
	if err != nil {
		t.Fatalf("tools/upstream/build.sh --env: %v", err)
	}
	var names []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if name, _, ok := strings.Cut(l, "="); ok {
			names = append(names, "var:"+name)
		}
	}
	return names
}

// usePattern matches a line that runs a command, builds with a cgo tag, or
// reads a tool's variable.
func usePattern(use string) *regexp.Regexp {
	switch {
	case strings.HasPrefix(use, "tag:"):
		return cgoTags[use]
	case strings.HasPrefix(use, "var:"):
		name := regexp.QuoteMeta(strings.TrimPrefix(use, "var:"))
		return regexp.MustCompile(`\$\{?` + name + `\b|\$\(` + name + `\)`)
	}
	return regexp.MustCompile("(?:^|[\\s;|&(`!'\"])(?:/usr/s?bin/)?" + regexp.QuoteMeta(use) + "(?:$|[\\s;|&)'\"])")
}

// code drops a shell or Make comment line: what it names is not run.
func code(line string) bool {
	t := strings.TrimSpace(line)
	return t != "" && !strings.HasPrefix(t, "#") && !strings.HasPrefix(t, "@#")
}

// closure is what a recipe runs: its own lines and, recursively, every
// script they name, except the installers, which are recorded as run.
type closure struct {
	lines []sourceLine
	runs  map[string]bool
}

type sourceLine struct{ where, text string }

func walk(t *testing.T, root, where string, lines []string, c *closure, seen map[string]bool) {
	t.Helper()
	for _, l := range lines {
		if !code(l) {
			continue
		}
		c.lines = append(c.lines, sourceLine{where, l})
		for _, m := range scriptRef.FindAllStringSubmatch(l, -1) {
			ref := m[1]
			if _, ok := installers[ref]; ok {
				switch {
				case ref == "tools/upstream/build.sh" && envOnly.MatchString(l):
				case ref == "tools/upstream/build.sh" && testTools.MatchString(l):
					c.runs[ref+" test"] = true
				default:
					c.runs[ref] = true
				}
				continue
			}
			if seen[ref] {
				continue
			}
			seen[ref] = true
			b, err := os.ReadFile(filepath.Join(root, ref))
			if err != nil {
				continue // a path in prose or an output file, not a script of the repository
			}
			walk(t, root, ref, strings.Split(string(b), "\n"), c, seen)
		}
	}
}

func TestMakeTargetsDependOnWhatInstallsWhatTheyUse(t *testing.T) {
	root := repoRoot(t)
	tools := toolVariables(t, root)
	installers["tools/upstream/build.sh"] = tools
	installers["tools/upstream/build.sh test"] = slices.DeleteFunc(slices.Clone(tools), func(v string) bool { return slices.Contains(planeTools, v) })
	targets, makeVariables := parseMakefile(t, filepath.Join(root, "Makefile"))
	if len(targets) < 10 || targets["demo"] == nil || targets["test"] == nil {
		t.Fatalf("read %d targets of the Makefile, without demo or test: has its form changed?", len(targets))
	}

	closures := map[string]*closure{}
	for name, tg := range targets {
		c := &closure{runs: map[string]bool{}}
		walk(t, root, "Makefile", tg.recipe, c, map[string]bool{})
		closures[name] = c
	}
	// installed returns the installers a target's chain runs.
	var installed func(name string, seen map[string]bool) map[string]bool
	installed = func(name string, seen map[string]bool) map[string]bool {
		out := map[string]bool{}
		if seen[name] || targets[name] == nil {
			return out
		}
		seen[name] = true
		for r := range closures[name].runs {
			out[r] = true
		}
		for _, p := range targets[name].prerequisites {
			for r := range installed(p, seen) {
				out[r] = true
			}
		}
		return out
	}
	providers := map[string][]string{}
	for inst, uses := range installers {
		for _, u := range uses {
			providers[u] = append(providers[u], inst)
		}
	}
	uses := make([]string, 0, len(providers))
	for u := range providers {
		uses = append(uses, u)
	}
	sort.Strings(uses)

	names := make([]string, 0, len(targets))
	for n := range targets {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		if slices.Contains(stoppers, name) {
			continue
		}
		have := installed(name, map[string]bool{})
		for _, u := range uses {
			if slices.ContainsFunc(providers[u], func(i string) bool { return have[i] }) {
				continue
			}
			re := usePattern(u)
			for _, l := range closures[name].lines {
				if l.where == "Makefile" && makeVariables[strings.TrimPrefix(u, "var:")] {
					continue // the Makefile's own variable of that name, not the tool's
				}
				if re.MatchString(l.text) {
					t.Errorf("make %s uses %s (%s: %q) but does not depend on a target that runs %s, which installs it",
						name, strings.TrimPrefix(u, "var:"), l.where, strings.TrimSpace(l.text), strings.Join(providers[u], " or "))
					break
				}
			}
		}
	}
}

// TestUsePattern keeps the check able to fail: a use in a command position
// is found, a word inside another name or a comment is not.
func TestUsePattern(t *testing.T) {
	cases := map[string]struct {
		use, line string
		want      bool
	}{
		"command":            {"crushtool", `[ -x /usr/bin/crushtool ] || exit 1`, true},
		"in a pipe":          {"ceph", `x | ceph -c conf status`, true},
		"part of a name":     {"ceph", `local/ceph/start.sh`, false},
		"target name":        {"ceph", `make ceph-up`, false},
		"tool variable":      {"var:KUBECTL", `$KUBECTL get pods`, true},
		"make variable":      {"var:KUBECTL", `$(KUBECTL) get pods`, true},
		"longer variable":    {"var:KUBE", `$KUBECTL get pods`, false},
		"ceph tag":           {"tag:ceph", `go vet -tags $(CEPH_TAGS) ./provider/...`, true},
		"libvirt tag":        {"tag:libvirt", `cd agents && go build -tags '$(AGENT_TAGS)' ./...`, true},
		"no tag":             {"tag:libvirt", `go test -short ./...`, false},
		"spelled tag":        {"tag:ceph", `go test -tags ceph,pacific ./...`, true},
		"quoted":             {"openstack", `sh -c "openstack --os-cloud x"`, true},
		"inside another cmd": {"ovsdb-server", `ovsdb-server-wrapper`, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := usePattern(tc.use).MatchString(tc.line); got != tc.want {
				t.Errorf("usePattern(%q).MatchString(%q) = %v, want %v", tc.use, tc.line, got, tc.want)
			}
		})
	}
	if code("\t@# a comment naming crushtool") || code("  # ceph -s") || !code("\tceph -s") {
		t.Error("code() does not tell comments from commands")
	}
}

// TestIntegrationInstallersProvide keeps the installers' table true: on a
// machine where an installer ran (its first command is there), every
// command it is said to provide is there.
func TestIntegrationInstallersProvide(t *testing.T) {
	found := func(command string) bool {
		if _, err := exec.LookPath(command); err == nil {
			return true
		}
		_, err := os.Stat(filepath.Join("/usr/sbin", command))
		return err == nil
	}
	for inst, uses := range installers {
		if len(uses) == 0 || strings.Contains(uses[0], ":") {
			continue
		}
		if !found(uses[0]) {
			t.Logf("%s has not run here (no %s): its commands are not checked (make test-integration runs it)", inst, uses[0])
			continue
		}
		var missing []string
		for _, u := range uses {
			if !strings.Contains(u, ":") && !found(u) {
				missing = append(missing, u)
			}
		}
		if len(missing) > 0 {
			t.Errorf("%s ran here but these commands it is said to install are missing: %s", inst, strings.Join(missing, ", "))
		}
	}
}
