package ceph

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Ceph's stretch mode (https://docs.ceph.com/en/latest/rados/operations/stretch-mode/)
// is a property of the whole cluster: its monitors, each located in a zone
// (or the tiebreaker's third site), elect by connectivity, and every pool is
// placed by one rule that keeps two copies in each of two zones. Rook sets it
// for a stretched CephCluster whose arbiter it runs itself; a pool whose
// arbiter monitor is external gets it from the provider, with the monitors'
// zones read from Ceph alone: Rook's daemons report their Kubernetes node as
// their host (NODE_NAME), and Rook's OSDs put each node's host bucket under
// the zone bucket of the node's zone label.

// Commands the stretch reads send.
const (
	prefixMonDump     = "mon dump"
	prefixMonMetadata = "mon metadata"
	prefixOSDTree     = "osd tree"
)

// Stretch is the stretch mode the monitors have (mon dump).
type Stretch struct {
	Enabled bool
	// Tiebreaker is the tiebreaker monitor's name ("" none).
	Tiebreaker string
	// Locations are the monitors' CRUSH locations by name, as mon
	// set_location gave them ("zone" → "zone1"; empty: none).
	Locations map[string]map[string]string
}

// StretchState reads the monitors' stretch mode.
func (c *Client) StretchState(ctx context.Context) (Stretch, error) {
	var dump struct {
		Stretch    bool   `json:"stretch_mode"`
		Tiebreaker string `json:"tiebreaker_mon"`
		Mons       []struct {
			Name     string `json:"name"`
			Location string `json:"crush_location"`
		} `json:"mons"`
	}
	if err := c.Command(ctx, map[string]any{"prefix": prefixMonDump}, nil, &dump); err != nil {
		return Stretch{}, err
	}
	s := Stretch{Enabled: dump.Stretch, Tiebreaker: dump.Tiebreaker, Locations: map[string]map[string]string{}}
	for _, m := range dump.Mons {
		s.Locations[m.Name] = parseLocation(m.Location)
	}
	return s, nil
}

// parseLocation reads a monitor's crush_location as mon dump prints it,
// "{zone=zone1}" or "{host=h1,zone=zone1}" ("{}" none).
func parseLocation(s string) map[string]string {
	loc := map[string]string{}
	for _, kv := range strings.FieldsFunc(strings.Trim(s, "{} "), func(r rune) bool { return r == ',' || r == ' ' }) {
		if k, v, ok := strings.Cut(kv, "="); ok {
			loc[k] = v
		}
	}
	return loc
}

// MonitorHosts are the monitors' hosts by name (mon metadata's hostname:
// under Rook, the Kubernetes node the monitor's pod runs on).
func (c *Client) MonitorHosts(ctx context.Context) (map[string]string, error) {
	var md []struct {
		Name     string `json:"name"`
		Hostname string `json:"hostname"`
	}
	if err := c.Command(ctx, map[string]any{"prefix": prefixMonMetadata}, nil, &md); err != nil {
		return nil, err
	}
	out := make(map[string]string, len(md))
	for _, m := range md {
		out[m.Name] = m.Hostname
	}
	return out, nil
}

// Zones are the CRUSH buckets of one type under a root: the hosts in each,
// and each one's weight.
type Zones struct {
	// HostZone is the zone of each host bucket under one.
	HostZone map[string]string
	// Weight of each zone (the sum of its OSDs' CRUSH weights).
	Weight map[string]float64
}

// osdTree is `ceph osd tree`: every bucket and OSD of the CRUSH map's main
// tree (shadow trees of device classes are not listed).
type osdTree struct {
	Nodes []struct {
		ID       int     `json:"id"`
		Name     string  `json:"name"`
		Type     string  `json:"type"`
		Weight   float64 `json:"crush_weight"`
		Class    string  `json:"device_class"`
		Children []int   `json:"children"`
	} `json:"nodes"`
}

// walk visits every node under the root bucket named root, each with the
// name of the bucket of type below it is in ("" none, and the bucket itself
// is visited with its own name).
func (t osdTree) walk(root, below string, visit func(i int, in string)) {
	byID := map[int]int{}
	for i, n := range t.Nodes {
		byID[n.ID] = i
	}
	var walk func(i int, in string)
	walk = func(i int, in string) {
		n := t.Nodes[i]
		if n.Type == below {
			in = n.Name
		}
		visit(i, in)
		for _, child := range n.Children {
			if j, ok := byID[child]; ok {
				walk(j, in)
			}
		}
	}
	for i, n := range t.Nodes {
		if n.Type == "root" && n.Name == root {
			walk(i, "")
		}
	}
}

func (c *Client) osdTree(ctx context.Context) (osdTree, error) {
	var t osdTree
	err := c.Command(ctx, map[string]any{"prefix": prefixOSDTree}, nil, &t)
	return t, err
}

// CrushZones reads the buckets of zoneType under root from the OSD tree.
func (c *Client) CrushZones(ctx context.Context, root, zoneType string) (Zones, error) {
	t, err := c.osdTree(ctx)
	if err != nil {
		return Zones{}, err
	}
	z := Zones{HostZone: map[string]string{}, Weight: map[string]float64{}}
	t.walk(root, zoneType, func(i int, zone string) {
		n := t.Nodes[i]
		switch {
		case n.Type == zoneType:
			if _, ok := z.Weight[zone]; !ok {
				z.Weight[zone] = 0 // listed even without OSDs
			}
		case n.Type == "host" && zone != "":
			z.HostZone[n.Name] = zone
		case n.ID >= 0 && zone != "":
			z.Weight[zone] += n.Weight
		}
	})
	return z, nil
}

// OSDClasses are the device classes of the OSDs under root, by OSD name
// ("osd.3"; "" an OSD of no class).
func (c *Client) OSDClasses(ctx context.Context, root string) (map[string]string, error) {
	t, err := c.osdTree(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	t.walk(root, "", func(i int, _ string) {
		if n := t.Nodes[i]; n.ID >= 0 {
			out[n.Name] = n.Class
		}
	})
	return out, nil
}

// StretchPlan is where each monitor is located when stretch mode is
// enabled.
type StretchPlan struct {
	// Zones are the two zones, sorted.
	Zones []string
	// Locations: each monitor's zone, the tiebreaker's included.
	Locations map[string]string
	// Tiebreaker is the one monitor on no host of the zones: the arbiter's.
	Tiebreaker string
}

// PlanStretch places each monitor (by its host, monHosts) in the zone of
// its host in zones; the one monitor whose host is in no zone is the
// tiebreaker, located in tiebreakerZone. It fails, saying what the cluster
// lacks, unless the monitors then stand in exactly two zones with one
// tiebreaker, and the zones' OSDs weigh the same, as Ceph asks: such a
// cluster is not ready for stretch mode yet (the arbiter's monitor has not
// joined, a zone's OSDs are not up), which a later reconcile may find it is.
func PlanStretch(monHosts map[string]string, zones Zones, tiebreakerZone string) (StretchPlan, error) {
	p := StretchPlan{Locations: map[string]string{}}
	var outside []string
	for _, m := range slices.Sorted(maps.Keys(monHosts)) {
		zone, ok := zones.HostZone[monHosts[m]]
		if !ok {
			outside = append(outside, fmt.Sprintf("%s (on %s)", m, monHosts[m]))
			p.Tiebreaker = m
			continue
		}
		p.Locations[m] = zone
		if !slices.Contains(p.Zones, zone) {
			p.Zones = append(p.Zones, zone)
		}
	}
	slices.Sort(p.Zones)
	placed := func() string {
		var s []string
		for _, m := range slices.Sorted(maps.Keys(p.Locations)) {
			s = append(s, fmt.Sprintf("%s (on %s) in %s", m, monHosts[m], p.Locations[m]))
		}
		if len(s) == 0 {
			return "none"
		}
		return strings.Join(s, ", ")
	}
	switch {
	case len(outside) == 0:
		return StretchPlan{}, fmt.Errorf("no tiebreaker monitor yet: every monitor runs on a host of a zone (%s); the arbiter's monitor has not joined", placed())
	case len(outside) > 1:
		return StretchPlan{}, fmt.Errorf("monitors %s run on no host of a zone: only one may, the tiebreaker (monitors in zones: %s)", strings.Join(outside, ", "), placed())
	case len(p.Zones) != 2:
		return StretchPlan{}, fmt.Errorf("stretch mode needs monitors in exactly 2 zones besides the tiebreaker; they are in %d: %s", len(p.Zones), placed())
	}
	if len(zones.Weight) != 2 {
		return StretchPlan{}, fmt.Errorf("stretch mode needs exactly 2 zones in the CRUSH map; it has %d: %s", len(zones.Weight), strings.Join(slices.Sorted(maps.Keys(zones.Weight)), ", "))
	}
	for _, zone := range p.Zones {
		if _, ok := zones.Weight[zone]; !ok {
			return StretchPlan{}, fmt.Errorf("monitors are in zone %s, which is not under the CRUSH root with the OSDs", zone)
		}
	}
	if a, b := zones.Weight[p.Zones[0]], zones.Weight[p.Zones[1]]; a != b || a == 0 {
		return StretchPlan{}, fmt.Errorf("stretch mode needs both zones' OSDs up with the same CRUSH weight: %s weighs %g, %s %g", p.Zones[0], a, p.Zones[1], b)
	}
	p.Locations[p.Tiebreaker] = tiebreakerZone
	return p, nil
}

// EnableStretchMode locates every monitor as plan says, has them elect by
// connectivity and enables stretch mode with rule (which must exist)
// dividing the cluster at zoneType. Ceph then places every pool by rule,
// with size 4 and min_size 2, and every new pool too. Each step repeats
// harmlessly, so a failure part-way is finished by the next reconcile.
func (c *Client) EnableStretchMode(ctx context.Context, plan StretchPlan, rule, zoneType string) error {
	if err := c.Command(ctx, map[string]any{"prefix": "mon set election_strategy", "strategy": "connectivity"}, nil, nil); err != nil {
		return err
	}
	for _, m := range slices.Sorted(maps.Keys(plan.Locations)) {
		if err := c.Command(ctx, map[string]any{"prefix": "mon set_location", "name": m,
			"args": []string{zoneType + "=" + plan.Locations[m]}}, nil, nil); err != nil {
			return err
		}
	}
	return c.Command(ctx, map[string]any{"prefix": "mon enable_stretch_mode", "tiebreaker_mon": plan.Tiebreaker,
		"new_crush_rule": rule, "dividing_bucket": zoneType}, nil, nil)
}
