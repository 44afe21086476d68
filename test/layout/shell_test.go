package layout

import (
	"regexp"
	"strings"
	"testing"
)

// earlyExitAfterPipe is a pipe into a reader that may leave before its
// input ends: grep -q (or -m) exits at its first match, head after its
// lines.
var earlyExitAfterPipe = regexp.MustCompile(`(?:^|[^|])\|\s*(grep\s+(-[a-zA-Z]*[qm][a-zA-Z]*\b|--quiet|--max-count)|head\b)`)

// earlyExits returns the lines of a bash script that pipe into a reader
// that may leave early, where pipefail is set. Under pipefail such a
// pipeline fails whenever the writer is still writing when the reader
// leaves (SIGPIPE): a check that found what it looked for says it did
// not, now and then. A cold CI run's local node failed so ("ip addr show
// | grep -q ADDR || ip addr add ADDR": Address already assigned). Read the
// whole output instead (grep >/dev/null, or a variable). Lines run by
// sh -c (no pipefail there) are left out.
func earlyExits(script string) []string {
	if !strings.Contains(script, "pipefail") {
		return nil
	}
	var found []string
	for _, line := range strings.Split(script, "\n") {
		code, _, _ := strings.Cut(line, " #")
		if strings.HasPrefix(strings.TrimSpace(code), "#") || strings.Contains(code, "sh -c") {
			continue
		}
		if earlyExitAfterPipe.MatchString(code) {
			found = append(found, strings.TrimSpace(line))
		}
	}
	return found
}

// TestNoEarlyExitUnderPipefail: no tracked bash script pipes into grep -q
// or head where pipefail is set.
func TestNoEarlyExitUnderPipefail(t *testing.T) {
	for f, script := range trackedFiles(t, 10, "*.sh", ".ci/run") {
		for _, l := range earlyExits(script) {
			t.Errorf("%s: %q pipes into a reader that may leave early, under pipefail: read the whole output (grep >/dev/null, or a variable)", f, l)
		}
	}
}

// TestEarlyExitRuleFails: the rule finds the line that failed the node,
// and not its fix or a script without pipefail.
func TestEarlyExitRuleFails(t *testing.T) {
	ruleCases(t, earlyExits, map[string]string{
		"the node's old line": "set -euo pipefail\nip addr show dev cni0 | grep -q \"inet $IP/\" || ip addr add \"$IP/24\" dev cni0\n",
	}, map[string]string{
		"read whole":     "set -euo pipefail\nip addr show dev cni0 | grep \"inet $IP/\" >/dev/null || ip addr add \"$IP/24\" dev cni0\n",
		"no pipefail":    "set -eu\nip addr show dev cni0 | grep -q x\n",
		"sh -c":          "set -o pipefail\nsh -c \"kubectl get node | grep -qx True\"\n",
		"in a comment":   "set -o pipefail\n# Not \"kubectl get | grep -q\": it fails\n",
		"grep -v, -c":    "set -o pipefail\nls | grep -v x | grep -c y\n",
		"or, not a pipe": "set -o pipefail\ngrep -q x f || grep -q y f || head -1 f\n",
		"after a string": "set -o pipefail\necho a | wc -l  # | head\n",
	})
}
