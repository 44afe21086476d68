package pool

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
)

// A share of a hypervisor pool is a number of nodes (Decide) and, once the
// pool knows its nodes, which ones (BindNodes): the nodes a cloud's compute
// agents run on and its Nova aggregate holds. The pool stays the one
// decider; BindNodes only turns the decided counts into names.

// Node is a node of a hypervisor pool as the pool's agents report it.
type Node struct {
	// Name of the node (its Hypervisor's, Nova's compute host).
	Name string
	// Zone is the availability zone the node is in.
	Zone string
	// Usable is false for a node out of service (failed, disconnected, in
	// maintenance): it is never given to a cloud, and a cloud that held it
	// gets another.
	Usable bool
	// Instances running on the node: a shrinking share frees nodes
	// without instances first.
	Instances int32
}

// Bound is a cloud's nodes after BindNodes.
type Bound struct {
	// Nodes the cloud holds, by name.
	Nodes []string
	// Draining are nodes the cloud holds beyond its share because they
	// still run its instances: it gives them up once they are empty.
	Draining []string
	// Short is how many nodes of its share the pool could not name yet:
	// no usable node is free (others drain, or nodes failed).
	Short int64
	// Instances on its nodes and those draining: a node a cloud holds
	// runs only that cloud's instances.
	Instances int32
	// OutOfService are the draining nodes that are out of service: lost
	// or in maintenance with the cloud's instances on them. A free node
	// takes each one's place in the share.
	OutOfService []string
}

// Message says what a cloud's nodes wait for, or "" when nothing.
func (b Bound) Message() string {
	if len(b.OutOfService) > 0 {
		msg := fmt.Sprintf("%v out of service with its instances on them: held until the instances are gone", b.OutOfService)
		if b.Short > 0 {
			msg += fmt.Sprintf("; %d node(s) of its share are not free yet", b.Short)
		}
		return msg
	}
	switch {
	case len(b.Draining) > 0 && b.Short > 0:
		return fmt.Sprintf("%d node(s) of its share are not free yet; it still holds %v until their instances are gone", b.Short, b.Draining)
	case len(b.Draining) > 0:
		return fmt.Sprintf("the share shrank: it holds %v until their instances are gone", b.Draining)
	case b.Short > 0:
		return fmt.Sprintf("%d node(s) of its share are not free yet (other clouds' nodes drain, or nodes are out of service)", b.Short)
	}
	return ""
}

// BindNodes names the nodes of each share. wants is each cloud's decided
// count (a dedicated pool's one cloud wants every usable node), before the
// nodes each cloud held.
//
//   - A cloud keeps the usable nodes it held, as many as it wants: nodes
//     never move from one cloud to another, and two clouds never hold one
//     node (a node two records name stays with the cloud first by name).
//   - A cloud that wants fewer gives up nodes without instances first,
//     then those with the fewest; one that still runs instances stays
//     bound (Draining) until they are gone.
//   - A node out of service (failed, in maintenance) leaves its cloud at
//     once when empty; with the cloud's instances on it, it stays the
//     cloud's, draining and named OutOfService, and does not count in the
//     share.
//   - A cloud that wants more, or lost nodes (failed, removed), gets free
//     usable nodes only — never another cloud's —, one at a time in the
//     zone where it has fewest, then the zone with most free, then by name.
//     Replacements come first: every cloud gets back as many nodes as it
//     held (within its share) before any cloud grows. Clouds are served by
//     name within each round, so the result depends on nothing else.
func BindNodes(nodes []Node, wants map[string]int64, before map[string][]string) map[string]Bound {
	byName := make(map[string]Node, len(nodes))
	for _, n := range nodes {
		byName[n.Name] = n
	}
	clouds := slices.Sorted(maps.Keys(wants))
	owner := map[string]string{}
	out := make(map[string]Bound, len(clouds))

	// What each cloud keeps of what it held.
	for _, c := range clouds {
		var kept []Node
		for _, name := range before[c] {
			n, ok := byName[name]
			if !ok || owner[name] != "" {
				continue // removed from the pool, or already another's
			}
			if !n.Usable && n.Instances == 0 {
				continue // out of service and empty: replaced below
			}
			owner[name] = c
			kept = append(kept, n)
		}
		want := wants[c]
		b := Bound{}
		// Usable nodes first, then empty ones, then the fewest instances:
		// what stays bound when the share shrinks.
		slices.SortFunc(kept, func(a, z Node) int {
			return cmp.Or(boolOrder(z.Usable, a.Usable), cmp.Compare(z.Instances, a.Instances), cmp.Compare(a.Name, z.Name))
		})
		for i, n := range kept {
			switch {
			case int64(i) < want && n.Usable:
				b.Nodes = append(b.Nodes, n.Name)
			case n.Instances > 0:
				b.Draining = append(b.Draining, n.Name)
			default:
				delete(owner, n.Name)
			}
		}
		out[c] = b
	}

	// Free usable nodes, by zone.
	free := map[string][]string{}
	for _, n := range nodes {
		if n.Usable && owner[n.Name] == "" {
			free[n.Zone] = append(free[n.Zone], n.Name)
		}
	}
	for z := range free {
		slices.Sort(free[z])
	}
	zoneOf := func(name string) string { return byName[name].Zone }
	// Replacements first: each cloud gets back up to as many nodes as it
	// held (within its share) before any cloud grows, so a new or growing
	// cloud never takes the free node another needs for a failed one.
	fill := func(c string, upTo int64) {
		b := out[c]
		perZone := map[string]int{}
		for _, n := range b.Nodes {
			perZone[zoneOf(n)]++
		}
		for int64(len(b.Nodes)) < upTo {
			z, ok := pickZone(free, perZone)
			if !ok {
				break
			}
			n := free[z][0]
			free[z] = free[z][1:]
			owner[n] = c
			perZone[z]++
			b.Nodes = append(b.Nodes, n)
		}
		out[c] = b
	}
	for _, c := range clouds {
		fill(c, min(wants[c], int64(len(before[c]))))
	}
	for _, c := range clouds {
		fill(c, wants[c])
		b := out[c]
		b.Short = wants[c] - int64(len(b.Nodes))
		for _, held := range [][]string{b.Nodes, b.Draining} {
			for _, n := range held {
				b.Instances += byName[n].Instances
			}
		}
		for _, n := range b.Draining {
			if !byName[n].Usable {
				b.OutOfService = append(b.OutOfService, n)
			}
		}
		slices.Sort(b.Nodes)
		slices.Sort(b.Draining)
		slices.Sort(b.OutOfService)
		out[c] = b
	}
	return out
}

// pickZone is the zone with free nodes where the cloud has fewest, then
// the one with most free nodes, then by name.
func pickZone(free map[string][]string, perZone map[string]int) (string, bool) {
	best, found := "", false
	for z, names := range free {
		if len(names) == 0 {
			continue
		}
		if !found || cmp.Or(cmp.Compare(perZone[z], perZone[best]), cmp.Compare(len(free[best]), len(names)), cmp.Compare(z, best)) < 0 {
			best, found = z, true
		}
	}
	return best, found
}

// boolOrder orders true before false when used as cmp(b, a).
func boolOrder(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}
