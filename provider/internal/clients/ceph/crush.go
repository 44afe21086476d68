package ceph

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/c5c3/consumer-plane/provider/internal/terminal"
)

// Crushtool is the crushtool CreateStretchRule compiles CRUSH maps with:
// the provider's image carries it (tools/packaging/build.sh), as Rook's
// operator image carries Ceph's tools for the same rule.
var Crushtool = "/usr/bin/crushtool"

// StretchRule keeps a pool's replicas in two buckets of ZoneType under
// Root, two in each, each copy on another host: the placement of Ceph's
// stretch mode, where losing a whole zone leaves two copies.
//
// The rule takes every OSD under Root, never a device class: a rule that
// takes one takes the class's shadow tree (zone "eu-de-1a~nvme"), while
// degraded stretch mode names the surviving zone by its real bucket
// ("eu-de-1a"); the two never match, so once a zone is lost every placement
// group of such a pool stays peered and its I/O blocks for as long as the
// zone is down (Ceph tracker 78741; shown on Ceph 16.2.15 by
// TestFaultCephStretchedZoneLost and local/ceph/zone-loss.sh). Class is
// therefore a condition on the cluster, checked before the rule is used:
// every OSD under Root has it, so the rule places data on the OSDs the
// class names and no other.
type StretchRule struct {
	Root, ZoneType, Class string
}

// Name of the rule: stretch_<zoneType>, under a root other than default
// stretch_<root>_<zoneType>.
func (r StretchRule) Name() string {
	n := "stretch_"
	if r.Root != "default" {
		n += r.Root + "_"
	}
	return n + r.ZoneType
}

// text is the rule in crushtool's language, with id; sizes adds the
// min_size and max_size lines the maps of Ceph releases before Quincy
// carry in every rule.
func (r StretchRule) text(id int, sizes bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "rule %s {\n\tid %d\n\ttype replicated\n", r.Name(), id)
	if sizes {
		b.WriteString("\tmin_size 1\n\tmax_size 10\n")
	}
	fmt.Fprintf(&b, "\tstep take %s\n\tstep choose firstn 0 type %s\n\tstep chooseleaf firstn 2 type host\n\tstep emit\n}\n", r.Root, r.ZoneType)
	return b.String()
}

// CreateStretchRule checks the rule's device class holds for every OSD
// under its root, then makes the rule unless one of its name exists. The
// monitors make single-step rules only, and this one chooses the zones and
// then two hosts in each; so, as Rook does for a stretched cluster and
// Ceph's stretch mode documentation shows, the CRUSH map is read,
// decompiled, given the rule, compiled with crushtool and set — only if no
// one changed the map meanwhile (prior_version), else the next reconcile
// tries again. A rule crushtool refuses (no such root or zone type) and a
// class the OSDs do not all have are terminal errors that say why; a
// crushtool that did not run to its end is not.
func (c *Client) CreateStretchRule(ctx context.Context, r StretchRule) error {
	if err := c.checkStretchClass(ctx, r); err != nil {
		return err
	}
	c.reads.forget(prefixRules)
	rules, err := c.CrushRules(ctx)
	if err != nil {
		return err
	}
	if _, ok := rules[r.Name()]; ok {
		return nil
	}
	bin, status, err := c.RawCommand(ctx, map[string]any{"prefix": "osd getcrushmap"}, nil)
	if err != nil {
		return err
	}
	m, err := crushtool(ctx, bin, "-d")
	if err != nil {
		return err
	}
	// The name and the next id are taken from the map itself, not from the
	// rules read above: another reconcile (a pool asking for the same rule,
	// or a device class rule) may have set a map since, and crushtool
	// refuses a name or an id given twice.
	id := 0
	for _, found := range mapRules.FindAllStringSubmatch(string(m), -1) {
		if found[1] == r.Name() {
			return nil
		}
		rid, _ := strconv.Atoi(found[2]) //nolint:errcheck // digits by the pattern
		id = max(id, rid+1)
	}
	text := strings.Replace(string(m), "# end crush map", r.text(id, strings.Contains(string(m), "\tmin_size "))+"\n# end crush map", 1)
	compiled, err := crushtool(ctx, []byte(text), "-c")
	var refused *exec.ExitError
	switch {
	case errors.As(err, &refused) && refused.Exited():
		// crushtool ran to its end and refused the rule: the spec names a
		// root or zone type the map does not have.
		return terminalf("CRUSH rule %s (root %q, zone type %q) cannot be made: %w", r.Name(), r.Root, r.ZoneType, err)
	case err != nil:
		// Not run to its end (the reconcile's deadline, a signal): the
		// next reconcile tries again.
		return err
	}
	set := map[string]any{"prefix": "osd setcrushmap"}
	if v, err := strconv.Atoi(strings.TrimSpace(status)); err == nil {
		set["prior_version"] = v
	}
	_, _, err = c.RawCommand(ctx, set, compiled)
	if IsErrno(err, syscall.EPERM) && strings.Contains(err.Error(), "prior_version") {
		// Someone changed the map since it was read: not a wrong command.
		return fmt.Errorf("the CRUSH map changed while rule %s was added; trying again: %s", r.Name(), strings.TrimSpace(err.Error()))
	}
	return err
}

// mapRules finds each rule's name and id in a decompiled CRUSH map.
var mapRules = regexp.MustCompile(`(?m)^rule (\S+) \{\n\s*id (\d+)$`)

// checkStretchClass fails, naming the OSDs, unless every OSD under the
// rule's root has its device class ("" any): the rule takes them all.
func (c *Client) checkStretchClass(ctx context.Context, r StretchRule) error {
	if r.Class == "" {
		return nil
	}
	osds, err := c.OSDClasses(ctx, r.Root)
	if err != nil {
		return err
	}
	var other []string
	for _, osd := range slices.Sorted(maps.Keys(osds)) {
		if osds[osd] != r.Class {
			other = append(other, fmt.Sprintf("%s is %q", osd, osds[osd]))
		}
	}
	if len(other) == 0 {
		return nil
	}
	return terminalf("a stretched pool on device class %q needs every OSD under CRUSH root %s of that class, and %s: "+
		"rule %s takes every OSD under the root, because Ceph's stretch mode cannot serve a pool whose rule takes a device class once a zone is lost "+
		"(Ceph tracker 78741); give the stretched cluster OSDs of that class only, or ask for the class its OSDs have",
		r.Class, r.Root, strings.Join(other, ", "), r.Name())
}

// crushtool runs Crushtool on in with one of -d (decompile) and -c
// (compile) and returns what it writes. Its input and output are memory
// files, not pipes: crushtool reads its input file by its size, which a
// pipe does not have, and the provider's container has no writable file
// system.
func crushtool(ctx context.Context, in []byte, op string) ([]byte, error) {
	stdin, err := memFile("crush-in", in)
	if err != nil {
		return nil, err
	}
	defer stdin.Close() //nolint:errcheck // read-only use
	stdout, err := memFile("crush-out", nil)
	if err != nil {
		return nil, err
	}
	defer stdout.Close()                                                              //nolint:errcheck // read below
	cmd := exec.CommandContext(ctx, Crushtool, op, "/dev/stdin", "-o", "/dev/stdout") //nolint:gosec // fixed tool and arguments
	var stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, &stderr
	err = cmd.Run()
	var notFound *exec.Error
	switch {
	case errors.As(err, &notFound):
		return nil, terminalf("%s is not found: the provider compiles CRUSH rules with it (its image carries it)", Crushtool)
	case err != nil:
		return nil, fmt.Errorf("crushtool %s: %w: %s", op, err, strings.TrimSpace(stderr.String()))
	}
	if _, err := stdout.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	return io.ReadAll(stdout)
}

// memFile is an anonymous file in memory holding data, read from its start.
func memFile(name string, data []byte) (*os.File, error) {
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("cannot make a memory file for crushtool: %w", err)
	}
	f := os.NewFile(uintptr(fd), name)
	if _, err := f.Write(data); err != nil {
		_ = f.Close() //nolint:errcheck // failed anyway
		return nil, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		_ = f.Close() //nolint:errcheck // failed anyway
		return nil, err
	}
	return f, nil
}

// terminalf is a terminal error (the spec, not the moment, is wrong).
func terminalf(format string, args ...any) error { return terminal.Wrap(fmt.Errorf(format, args...)) }
