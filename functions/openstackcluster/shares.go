package main

import (
	"fmt"
	"slices"
	"time"

	"github.com/crossplane/function-sdk-go/resource"

	"github.com/c5c3/consumer-plane/apis/consumer/v1alpha1"
	"github.com/c5c3/consumer-plane/internal/cephplacement"
	"github.com/c5c3/consumer-plane/internal/pool"
)

// A cloud's share of a pool is decided by the pool (pool.Decide,
// docs/allocation.md): the cloud records what it asks for on its usage of
// the pool, and reads what it has in the pool's status. A hypervisor pool
// shares out nodes, a storage pool gigabytes of its raw capacity.

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

// volumeQuotaGB is the tenant's volume pool quota in a storage pool: the
// spec's; without one, the default of its size in a shared pool (at most
// the Composition's cap), and unlimited (0) in a dedicated one.
func volumeQuotaGB(c *cloud, pool *v1alpha1.XStorageCluster) int64 {
	q := c.xr.Spec.Storage.Ceph.VolumePool.QuotaGB
	if q > 0 || pool.Spec.Dedicated {
		return q
	}
	d, ok := v1alpha1.DefaultVolumeQuotaGB[c.xr.Spec.Size]
	if !ok {
		d = v1alpha1.DefaultVolumeQuotaGB[v1alpha1.SizeSmall]
	}
	if caps := c.in.MaxQuotas; caps != nil && caps.VolumePoolGB != nil {
		d = min(d, *caps.VolumePoolGB)
	}
	return d
}

// checkVolumeQuotaCap refuses a volume pool quota above the Composition's
// cap, or unlimited where it sets one.
func checkVolumeQuotaCap(c *cloud, pool *v1alpha1.XStorageCluster) error {
	caps := c.in.MaxQuotas
	if caps == nil || caps.VolumePoolGB == nil {
		return nil
	}
	switch q := volumeQuotaGB(c, pool); {
	case q == 0:
		return fmt.Errorf("spec.storage.ceph.volumePool.quotaGB: unlimited (0, in dedicated storage pool %s) exceeds this Composition's cap of %d GB (maxQuotas.volumePoolGB of its %s variant): set a quota of at most %d", pool.Spec.Name, *caps.VolumePoolGB, c.in.Environment, *caps.VolumePoolGB)
	case q > *caps.VolumePoolGB:
		return fmt.Errorf("spec.storage.ceph.volumePool.quotaGB: %d exceeds this Composition's cap of %d GB (maxQuotas.volumePoolGB of its %s variant): ask for at most %d", q, *caps.VolumePoolGB, c.in.Environment, *caps.VolumePoolGB)
	}
	return nil
}

// replication of the tenant's volume pool in a storage pool, which
// multiplies its quota into the raw capacity it may take: the claim's, or
// in a stretched pool the stretch's (two replicas in each zone), whatever
// the claim asks (internal/cephplacement).
func replication(c *v1alpha1.XOpenStackCluster, pool *v1alpha1.XStorageCluster) int64 {
	if pool != nil && cephplacement.Stretched(&pool.Spec) {
		return cephplacement.StretchReplicas
	}
	return int64(max(c.Spec.Storage.Ceph.VolumePool.Replication, 1))
}

// askedGB is the raw GB a cloud asks of a storage pool: its volume pool
// quota times its replication; 0 (not accounted) for an unlimited pool.
func askedGB(c *cloud, pool *v1alpha1.XStorageCluster) int64 {
	return volumeQuotaGB(c, pool) * replication(c.xr, pool)
}

// howAskedGB says what the cloud's ask of a storage pool is made of.
func howAskedGB(c *cloud, pool *v1alpha1.XStorageCluster) string {
	how := fmt.Sprintf(" (a quota of %d GB × %d replicas", volumeQuotaGB(c, pool), replication(c.xr, pool))
	if c.xr.Spec.Storage.Ceph.VolumePool.QuotaGB == 0 {
		how += fmt.Sprintf(", the default of a %s cloud: set spec.storage.ceph.volumePool.quotaGB to ask for less", c.xr.Spec.Size)
	}
	return how + ")"
}

// allocation is the cloud's share of a pool, in the pool's unit.
type allocation struct {
	// has is what the cloud has now: what it asked for once the pool gave
	// it, what it had before while the pool has not.
	has int64
	// asked is what the cloud asks for.
	asked int64
	// waiting: the pool has not decided what the cloud asks for yet.
	waiting bool
	// refused: the pool has no room for what the cloud asks for; free is
	// what it has for this cloud, others the shares that fill it.
	refused bool
	free    int64
	others  []pool.Share
	// since is when the cloud asked for more than it has, for its record.
	since time.Time
	// hosts are the nodes of a hypervisor pool the cloud holds by name (its
	// share's nodes and those still draining), nil while the pool has not
	// named them.
	hosts []string
	// draining are hosts the cloud holds beyond its share because they
	// still run its instances: they leave it once empty.
	draining []string
	// instances of the cloud on its hosts, as the pool's agents report them.
	instances int32
}

// allocationIn reads the cloud's share of a pool of capacity from the
// pool's shares. Until the pool has a share of the cloud, the cloud has
// held, what it had before the pool decided (the pool adopts it from the
// cloud's record). Asking for less takes effect at once; asking for more
// waits for the pool, which serves requests in the order they were made
// (since, kept from the cloud's record while it asks for the same).
func allocationIn(c *cloud, capacity int64, shares []pool.Share, asked, held int64, own pool.Record, recorded bool, now time.Time) allocation {
	i := slices.IndexFunc(shares, func(s pool.Share) bool { return s.Cloud == c.name })
	if i >= 0 {
		held = shares[i].Allocated
	}
	a := allocation{asked: asked, has: held}
	if a.asked <= held {
		a.has = a.asked
		return a
	}
	a.since = now.UTC().Truncate(time.Second)
	if recorded && own.Asked == a.asked && !own.Since.IsZero() {
		a.since = own.Since
	}
	a.free = capacity
	for _, s := range shares {
		if s.Cloud != c.name {
			a.free -= s.Allocated
			if s.Allocated > 0 {
				a.others = append(a.others, s)
			}
		}
	}
	switch {
	case i < 0 || shares[i].Asked != a.asked:
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

// hypervisorAllocation is the cloud's share of nodes of a hypervisor pool.
// A cloud from before pools decided shares has what its status recorded.
func hypervisorAllocation(c *cloud, p *v1alpha1.XHypervisorCluster, own pool.Record, recorded bool, now time.Time) allocation {
	shares := make([]pool.Share, 0, len(p.Status.Shares))
	held := recordedNodes(c.xr, string(p.Spec.Name))
	var hosts, draining []string
	var instances int32
	for _, s := range p.Status.Shares {
		shares = append(shares, pool.Share{Cloud: s.Cloud, Claim: s.Claim, Asked: int64(s.Asked), Allocated: int64(s.Allocated)})
		if s.Cloud == c.name {
			held = s.Allocated
			if len(s.Nodes)+len(s.Draining) > 0 {
				hosts = slices.Sorted(slices.Values(slices.Concat(s.Nodes, s.Draining)))
			}
			draining, instances = s.Draining, s.Instances
		}
	}
	ask := asked(c.xr, p, held)
	if c.removingFrom(usedHypervisorPool, string(p.Spec.Name)) != "" {
		ask = 0 // leaving: it gives back every node it can
	}
	a := allocationIn(c, int64(p.Spec.Workers), shares, int64(ask), int64(held), own, recorded, now)
	a.hosts, a.draining, a.instances = hosts, draining, instances
	return a
}

// storageAllocation is the cloud's share of a storage pool's raw capacity.
// A cloud whose volume pool exists from before pools decided shares has
// what its quota takes (held).
func storageAllocation(c *cloud, p *v1alpha1.XStorageCluster, held int64, own pool.Record, recorded bool, now time.Time) allocation {
	shares := make([]pool.Share, 0, len(p.Status.Shares))
	for _, s := range p.Status.Shares {
		shares = append(shares, pool.Share{Cloud: s.Cloud, Claim: s.Claim, Asked: s.AskedGB, Allocated: s.AllocatedGB})
	}
	ask := askedGB(c, p)
	if c.removingFrom(usedStoragePool, string(p.Spec.Name)) != "" {
		ask = held // leaving: it keeps what its data is in, and asks for no more
	}
	return allocationIn(c, p.Status.ShareableGB, shares, ask, held, own, recorded, now)
}

// record is the cloud's share record on its usage of the pool.
func (a allocation) record(who string, u pool.Unit) map[string]string {
	return pool.Record{Who: who, Asked: a.asked, Allocated: a.has, Since: a.since}.Annotations(u)
}

// ownRecord is what the cloud's observed usage of a pool records, if it
// records anything.
func ownRecord(observed map[resource.Name]resource.ObservedComposed, u used, name string) (pool.Record, bool) {
	o, ok := observed[usageName(u, name)]
	if !ok {
		return pool.Record{}, false
	}
	r := pool.RecordOf(u.unit, o.Resource.GetAnnotations(), "", time.Time{})
	return r, r.Unknown == ""
}

// describeShares says how much of a pool other clouds hold, for a refusal a
// tenant reads: how much and how many, never whose (the pool's
// status.shares names them for the platform team).
func describeShares(ss []pool.Share, unit string) string {
	var held int64
	for _, s := range ss {
		held += s.Allocated
	}
	clouds := "clouds"
	if len(ss) == 1 {
		clouds = "cloud"
	}
	return fmt.Sprintf("%d %s held by %d other %s", held, unit, len(ss), clouds)
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
