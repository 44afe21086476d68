package ceph

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/c5c3/consumer-plane/internal/cephplacement"
	"github.com/c5c3/consumer-plane/provider/internal/terminal"
)

// The storage pool's status (cephplacement, in the functions) names the
// rule this package makes for a stretched pool's tenant pools; the two
// names are written twice, because the functions may not import the
// provider. They must not drift, whatever the device class (which the
// rule does not take).
func TestStretchRuleNameMatchesThePlacementsName(t *testing.T) {
	for _, class := range []string{"", "nvme", "hdd"} {
		// The cloud's function asks for root default and the placement's
		// failure domain (functions/openstackcluster: Pool spec.forProvider.stretch).
		r := StretchRule{Root: "default", ZoneType: cephplacement.DomainZone, Class: class}
		p := cephplacement.Placement{Stretched: true, FailureDomain: cephplacement.DomainZone}
		if r.Name() != p.CrushRule() {
			t.Errorf("class %q: the provider makes %q, the status names %q", class, r.Name(), p.CrushRule())
		}
	}
}

// The stretch rule takes the root itself whatever the class: a take of a
// class's shadow tree leaves every PG peered once a zone is lost (see
// StretchRule).
func TestStretchRuleTakesTheRoot(t *testing.T) {
	for _, class := range []string{"", "nvme"} {
		got := StretchRule{Root: "default", ZoneType: "zone", Class: class}.text(3, false)
		want := "rule stretch_zone {\n\tid 3\n\ttype replicated\n\tstep take default\n\tstep choose firstn 0 type zone\n\tstep chooseleaf firstn 2 type host\n\tstep emit\n}\n"
		if got != want {
			t.Errorf("class %q: the rule is\n%s\nwant\n%s", class, got, want)
		}
	}
	if got := (StretchRule{Root: "dc", ZoneType: "datacenter", Class: "ssd"}).Name(); got != "stretch_dc_datacenter" {
		t.Errorf("under root dc by datacenter: %s, want stretch_dc_datacenter", got)
	}
}

// The class is a condition on the OSDs under the root, checked before any
// rule is made: an OSD of another class under it, or of none, refuses it,
// naming the OSD; one outside the root does not count.
func TestStretchRuleChecksTheClassOfEveryOSDUnderTheRoot(t *testing.T) {
	// root default > zone a > host h1 > osd.0 (nvme), osd.1 (hdd); root
	// other > osd.2 (hdd).
	tree := `{"nodes": [
	  {"id": -1, "name": "default", "type": "root", "children": [-2]},
	  {"id": -2, "name": "a", "type": "zone", "children": [-3]},
	  {"id": -3, "name": "h1", "type": "host", "children": [0, 1]},
	  {"id": 0, "name": "osd.0", "type": "osd", "device_class": "nvme"},
	  {"id": 1, "name": "osd.1", "type": "osd", "device_class": "%s"},
	  {"id": -4, "name": "other", "type": "root", "children": [2]},
	  {"id": 2, "name": "osd.2", "type": "osd", "device_class": "hdd"}]}`
	for _, tc := range []struct {
		osd1, class, wantErr string
	}{
		{osd1: "nvme", class: "nvme"},
		{osd1: "hdd", class: ""},
		{osd1: "hdd", class: "nvme", wantErr: `a stretched pool on device class "nvme" needs every OSD under CRUSH root default of that class, and osd.1 is "hdd": rule stretch_zone takes every OSD`},
		{osd1: "", class: "nvme", wantErr: `osd.1 is ""`},
		{osd1: "nvme", class: "ssd", wantErr: `osd.0 is "nvme", osd.1 is "nvme"`},
	} {
		f := &fakeConn{out: strings.Replace(tree, "%s", tc.osd1, 1)}
		err := (&Client{Conn: f}).checkStretchClass(context.Background(), StretchRule{Root: "default", ZoneType: "zone", Class: tc.class})
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("osd.1 %q, class %q: %v, want no error", tc.osd1, tc.class, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("osd.1 %q, class %q: %v, want an error containing %q", tc.osd1, tc.class, err, tc.wantErr)
		case tc.class == "" && len(f.sent) != 0:
			t.Errorf("no class: sent %v, want nothing", f.sent)
		}
	}
}

// crushConn is a monitor holding a CRUSH map: it answers the rules read
// (as the provider last saw them) and the map (as it is now), and records
// the map set.
type crushConn struct {
	fakeConn
	rules string // osd crush rule dump, JSON
	crush []byte // osd getcrushmap, compiled
	set   []byte
}

func (c *crushConn) MonCommand(cmd, in []byte) ([]byte, string, error) {
	var m map[string]any
	_ = json.Unmarshal(cmd, &m) //nolint:errcheck // the client's own JSON
	c.sent = append(c.sent, m)
	switch m["prefix"] {
	case "osd crush rule dump":
		return []byte(c.rules), "", nil
	case "osd getcrushmap":
		return c.crush, "7", nil
	case "osd setcrushmap":
		c.set = in
	}
	return nil, "", nil
}

// crushMap is a one-OSD map in crushtool's language with rules (each
// "name id") and the two zones a stretch rule chooses from.
func crushMap(rules ...string) string {
	var b strings.Builder
	b.WriteString("device 0 osd.0 class hdd\ntype 0 osd\ntype 1 host\ntype 2 zone\ntype 3 root\n" +
		"host h1 {\n\tid -2\n\talg straw2\n\thash 0\n\titem osd.0 weight 1.000\n}\n" +
		"zone a {\n\tid -3\n\talg straw2\n\thash 0\n\titem h1 weight 1.000\n}\n" +
		"zone b {\n\tid -4\n\talg straw2\n\thash 0\n}\n" +
		"root default {\n\tid -1\n\talg straw2\n\thash 0\n\titem a weight 1.000\n\titem b weight 0.000\n}\n")
	for _, r := range rules {
		name, id, _ := strings.Cut(r, " ")
		fmt.Fprintf(&b, "rule %s {\n\tid %s\n\ttype replicated\n\tmin_size 1\n\tmax_size 10\n\tstep take default\n\tstep chooseleaf firstn 0 type host\n\tstep emit\n}\n", name, id)
	}
	b.WriteString("# end crush map\n")
	return b.String()
}

// TestIntegrationStretchRuleRacesAnotherWriter: the rules the provider
// read are older than the map it changes (another pool's reconcile set one
// in between). The rule already in the map is not added twice; a rule
// added meanwhile keeps its id, the new one takes the next. A crushtool
// that did not run to its end is a reason to try again, not a wrong spec;
// one that refuses the rule is. The real crushtool compiles the maps.
func TestIntegrationStretchRuleRacesAnotherWriter(t *testing.T) {
	if _, err := exec.LookPath(Crushtool); err != nil {
		msg := fmt.Sprintf("needs crushtool (%v): run `make ceph-deps` (local/ceph/install.sh as root)", err)
		if os.Getenv("REQUIRE_INTEGRATION") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	ctx := context.Background()
	compile := func(text string) []byte {
		t.Helper()
		b, err := crushtool(ctx, []byte(text), "-c")
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	stretch := StretchRule{Root: "default", ZoneType: "zone"}
	read := `[{"rule_id": 0, "rule_name": "replicated_rule"}]`

	// Made meanwhile by a pool asking for the same rule: nothing is set.
	c := &crushConn{rules: read, crush: compile(crushMap("replicated_rule 0", "stretch_zone 1"))}
	if err := (&Client{Conn: c}).CreateStretchRule(ctx, stretch); err != nil || c.set != nil {
		t.Errorf("the rule already in the map: %v, set %d bytes; want nothing set", err, len(c.set))
	}

	// A device class rule made meanwhile with id 1: the stretch rule is id 2.
	c = &crushConn{rules: read, crush: compile(crushMap("replicated_rule 0", "replicated_hdd 1"))}
	if err := (&Client{Conn: c}).CreateStretchRule(ctx, stretch); err != nil {
		t.Fatalf("a rule made meanwhile: %v", err)
	}
	got, err := crushtool(ctx, c.set, "-d")
	if err != nil {
		t.Fatalf("the map set: %v", err)
	}
	for _, want := range []string{"rule replicated_hdd {\n\tid 1\n", "rule stretch_zone {\n\tid 2\n"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("the map set lacks %q:\n%s", want, got)
		}
	}
	if v := c.sent[len(c.sent)-1]["prior_version"]; v != float64(7) {
		t.Errorf("setcrushmap's prior_version %v, want 7 (the version of the map read)", v)
	}

	// crushtool refusing (no such root): terminal, naming the rule.
	c = &crushConn{rules: read, crush: compile(crushMap("replicated_rule 0"))}
	err = (&Client{Conn: c}).CreateStretchRule(ctx, StretchRule{Root: "nowhere", ZoneType: "zone"})
	if !terminal.Is(err) || !strings.Contains(err.Error(), "CRUSH rule stretch_nowhere_zone") || c.set != nil {
		t.Errorf("no such root: %v (set %d bytes), want a terminal error naming stretch_nowhere_zone and nothing set", err, len(c.set))
	}

	// crushtool killed while compiling: tried again, not terminal.
	killed := filepath.Join(t.TempDir(), "crushtool")
	script := "#!/bin/sh\ncase \"$1\" in -c) kill -KILL $$ ;; esac\nexec " + Crushtool + " \"$@\"\n"
	if err := os.WriteFile(killed, []byte(script), 0o755); err != nil { //nolint:gosec // an executable of the test's own
		t.Fatal(err)
	}
	c = &crushConn{rules: read, crush: compile(crushMap("replicated_rule 0"))}
	orig := Crushtool
	Crushtool = killed
	t.Cleanup(func() { Crushtool = orig })
	if err := (&Client{Conn: c}).CreateStretchRule(ctx, stretch); err == nil || terminal.Is(err) || c.set != nil {
		t.Errorf("crushtool killed: %v (set %d bytes), want an error to retry, not terminal, and nothing set", err, len(c.set))
	}
}
