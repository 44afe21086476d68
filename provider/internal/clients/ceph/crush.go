package ceph

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
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
// Root, two in each, each copy on another host, on OSDs of Class ("" any):
// the placement of Ceph's stretch mode, where losing a whole zone leaves
// two copies.
type StretchRule struct {
	Root, ZoneType, Class string
}

// Name of the rule: stretch_<zoneType>[_<class>], under a root other than
// default stretch_<root>_<zoneType>[_<class>].
func (r StretchRule) Name() string {
	n := "stretch_"
	if r.Root != "default" {
		n += r.Root + "_"
	}
	n += r.ZoneType
	if r.Class != "" {
		n += "_" + r.Class
	}
	return n
}

// text is the rule in crushtool's language, with id; sizes adds the
// min_size and max_size lines the maps of Ceph releases before Quincy
// carry in every rule.
func (r StretchRule) text(id int, sizes bool) string {
	take := "step take " + r.Root
	if r.Class != "" {
		take += " class " + r.Class
	}
	var b strings.Builder
	fmt.Fprintf(&b, "rule %s {\n\tid %d\n\ttype replicated\n", r.Name(), id)
	if sizes {
		b.WriteString("\tmin_size 1\n\tmax_size 10\n")
	}
	fmt.Fprintf(&b, "\t%s\n\tstep choose firstn 0 type %s\n\tstep chooseleaf firstn 2 type host\n\tstep emit\n}\n", take, r.ZoneType)
	return b.String()
}

// CreateStretchRule makes the rule unless one of its name exists. The
// monitors make single-step rules only, and this one chooses the zones and
// then two hosts in each; so, as Rook does for a stretched cluster and
// Ceph's stretch mode documentation shows, the CRUSH map is read,
// decompiled, given the rule, compiled with crushtool and set — only if no
// one changed the map meanwhile (prior_version), else the next reconcile
// tries again. A rule crushtool refuses (no such root, zone type or device
// class) is a terminal error that says why.
func (c *Client) CreateStretchRule(ctx context.Context, r StretchRule) error {
	c.reads.forget(prefixRules)
	rules, err := c.CrushRules(ctx)
	if err != nil {
		return err
	}
	if _, ok := rules[r.Name()]; ok {
		return nil
	}
	if r.Class != "" {
		// crushtool fails on a class no OSD has without saying why.
		var classes []string
		if err := c.Command(ctx, map[string]any{"prefix": "osd crush class ls"}, nil, &classes); err != nil {
			return err
		}
		if !slices.Contains(classes, r.Class) {
			return terminalf("CRUSH rule %s cannot be made: no OSD of the cluster has device class %q (it has %s); a stretched pool keeps its device class in its rule",
				r.Name(), r.Class, strings.Join(classes, ", "))
		}
	}
	bin, status, err := c.RawCommand(ctx, map[string]any{"prefix": "osd getcrushmap"}, nil)
	if err != nil {
		return err
	}
	m, err := crushtool(ctx, bin, "-d")
	if err != nil {
		return err
	}
	id := 0
	for _, rid := range rules {
		id = max(id, rid+1)
	}
	text := strings.Replace(string(m), "# end crush map", r.text(id, strings.Contains(string(m), "\tmin_size "))+"\n# end crush map", 1)
	compiled, err := crushtool(ctx, []byte(text), "-c")
	if err != nil {
		return terminalf("CRUSH rule %s (root %q, zone type %q, device class %q) cannot be made: %w", r.Name(), r.Root, r.ZoneType, r.Class, err)
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
