package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/crossplane/function-sdk-go/resource"

	"github.com/c5c3/consumer-plane/apis/consumer/v1alpha1"
	"github.com/c5c3/consumer-plane/internal/pool"
)

// A cloud's share of a hypervisor pool is decided by the pool
// (pool.Decide, docs/allocation.md): the cloud records what it asks for on
// its usage of the pool, and reads what it has in the pool's status.

// asked is the nodes a cloud asks of a pool: its spec's share; without
// one, a dedicated pool whole, else what it already holds (a default share
// never moves, even when defaults change), else the default share of its
// size, at most the pool.
func asked(c *v1alpha1.XOpenStackCluster, pool *v1alpha1.XHypervisorCluster, held int32) int32 {
	switch n := c.Spec.ShareOf(pool.Spec.Name); {
	case n != nil:
		return *n
	case pool.Spec.Dedicated:
		return pool.Spec.Workers
	case held > 0:
		return held
	default:
		return min(defaultShare(c.Spec.Size), pool.Spec.Workers)
	}
}

// defaultShare of a cloud's size (the spec's, before a Composition's cap).
func defaultShare(s v1alpha1.Size) int32 {
	if n, ok := v1alpha1.DefaultNodeShares[s]; ok {
		return n
	}
	return v1alpha1.DefaultNodeShares[v1alpha1.SizeSmall]
}

// howAsked explains a refused share that the claim did not set itself.
func howAsked(c *v1alpha1.XOpenStackCluster, pool *v1alpha1.XHypervisorCluster) string {
	if pool.Spec.Dedicated || c.Spec.ShareOf(pool.Spec.Name) != nil {
		return ""
	}
	return fmt.Sprintf(" (the default share of a %s cloud: set spec.hypervisorShares to ask for fewer)", c.Spec.Size)
}

// allocation is the cloud's share of a pool.
type allocation struct {
	// nodes the cloud has now: what it asked for once the pool gave it,
	// what it had before while the pool has not.
	nodes int32
	// asked is what the cloud asks for (its share, or the default).
	asked int32
	// waiting: the pool has not decided what the cloud asks for yet.
	waiting bool
	// refused: the pool has no room for what the cloud asks for; free is
	// what it has for this cloud, others the shares that fill it.
	refused bool
	free    int32
	others  []v1alpha1.PoolShare
	// since is when the cloud asked for more than it has, for its record.
	since time.Time
}

// allocationOf reads the cloud's share of a pool from the pool's status.
// Until the pool has a share of the cloud, the cloud has what its own
// status recorded (a cloud from before pools decided shares; the pool
// adopts it from the cloud's record). Asking for less takes effect at
// once; asking for more waits for the pool, which serves requests in the
// order they were made (since, kept from the cloud's record while it asks
// for the same).
func allocationOf(c *cloud, p *v1alpha1.XHypervisorCluster, own pool.Record, recorded bool, now time.Time) allocation {
	i := slices.IndexFunc(p.Status.Shares, func(s v1alpha1.PoolShare) bool { return s.Cloud == c.name })
	held := recordedNodes(c.xr, string(p.Spec.Name))
	if i >= 0 {
		held = p.Status.Shares[i].Allocated
	}
	a := allocation{asked: asked(c.xr, p, held), nodes: held}
	if a.asked <= held {
		a.nodes = a.asked
		return a
	}
	a.since = now.UTC().Truncate(time.Second)
	if recorded && own.Asked == a.asked && !own.Since.IsZero() {
		a.since = own.Since
	}
	a.free = p.Spec.Workers
	for _, s := range p.Status.Shares {
		if s.Cloud != c.name {
			a.free -= s.Allocated
			if s.Allocated > 0 {
				a.others = append(a.others, s)
			}
		}
	}
	switch {
	case i < 0 || p.Status.Shares[i].Asked != a.asked:
		// The pool has not seen what the cloud asks for yet.
		a.waiting = true
	case a.asked <= a.free:
		// It fits, and the pool has not given it yet: the pool's
		// Allocation condition says why.
		a.waiting = true
	default:
		a.refused = true
	}
	return a
}

// record is the cloud's share record on its usage of the pool.
func (a allocation) record(who string) map[string]string {
	return pool.Record{Who: who, Asked: a.asked, Allocated: a.nodes, Since: a.since}.Annotations()
}

// ownRecord is what the cloud's observed usage of a pool records, if it
// records anything.
func ownRecord(observed map[resource.Name]resource.ObservedComposed, name string) (pool.Record, bool) {
	o, ok := observed[usageName(usedHypervisorPool, name)]
	if !ok {
		return pool.Record{}, false
	}
	r := pool.RecordOf(o.Resource.GetAnnotations(), "", time.Time{})
	return r, r.Unknown == ""
}

// describeShares lists the shares that fill a pool, for a refusal.
func describeShares(ss []v1alpha1.PoolShare) string {
	if len(ss) == 0 {
		return "none"
	}
	parts := make([]string, 0, len(ss))
	for _, s := range ss {
		parts = append(parts, fmt.Sprintf("%s: %d", s.Claim, s.Allocated))
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}

// recordedNodes is what the cloud's status records of a pool.
func recordedNodes(xr *v1alpha1.XOpenStackCluster, name string) int32 {
	if cp := xr.Status.ConsumedPools; cp != nil {
		for _, h := range cp.Hypervisor {
			if h.Name == name {
				return h.AllocatedNodes
			}
		}
	}
	return 0
}
