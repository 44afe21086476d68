package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/crossplane/function-sdk-go/resource"

	cephv1alpha1 "github.com/c5c3/consumer-plane/apis/ceph/v1alpha1"
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
	return defaultOfSize(v1alpha1.DefaultNodeShares, s)
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
	if q > 0 || pool != nil && pool.Spec.Dedicated {
		return q
	}
	d := defaultOfSize(v1alpha1.DefaultVolumeQuotaGB, c.xr.Spec.Size)
	if caps := c.in.MaxQuotas; caps != nil && caps.VolumePoolGB != nil {
		d = min(d, *caps.VolumePoolGB)
	}
	return d
}

// quotaGB is the quota of one of the tenant's other pools in a storage
// pool: the spec's (q); without one, the default of the cloud's size in a
// shared pool, and unlimited (0) in a dedicated one.
func quotaGB(c *cloud, pool *v1alpha1.XStorageCluster, q int64, defaults map[v1alpha1.Size]int64) int64 {
	if q > 0 || pool != nil && pool.Spec.Dedicated {
		return q
	}
	return defaultOfSize(defaults, c.xr.Spec.Size)
}

// defaultOfSize is a default by the cloud's size, a small cloud's for a
// size the table does not know.
func defaultOfSize[T any](defaults map[v1alpha1.Size]T, s v1alpha1.Size) T {
	if d, ok := defaults[s]; ok {
		return d
	}
	return defaults[v1alpha1.SizeSmall]
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
	return replicasIn(pool, c.Spec.Storage.Ceph.VolumePool.Replication)
}

// replicasIn is the replication a pool of the tenant gets in a storage
// pool: the claim's (n), or the stretch's in a stretched pool.
func replicasIn(pool *v1alpha1.XStorageCluster, n int32) int64 {
	if pool != nil && cephplacement.Stretched(&pool.Spec) {
		return cephplacement.StretchReplicas
	}
	return int64(max(n, 1))
}

// A tenantPool is one of the tenant's Ceph pools in a storage pool, as
// the cloud's share of the storage pool counts it: every pool of a tenant
// has a quota there (#52 §7), so that its share bounds what it can write.
type tenantPool struct {
	// use names the pool (useVolumes, useImages, ...).
	use string
	// field is the claim's field that sets the quota.
	field string
	// gb is the quota, 0 unlimited (a dedicated pool's without one).
	gb int64
	// replicas multiply the quota into the raw capacity it may take.
	replicas int64
	// pools is how many Ceph pools get that quota each: Rook makes seven
	// from an object store's metadata pool.
	pools int64
	// kept: a filesystem or object store the claim switched off, which
	// stays under dataPolicy Retain with the quotas it has, and still
	// takes its part of the share.
	kept bool
}

// raw is the raw capacity of the storage pool the pool may take, in GB.
func (p tenantPool) raw() int64 { return p.gb * p.replicas * p.pools }

// Uses of the tenant's Ceph pools made by Rook, besides the RBD pools'
// (useVolumes, useImages, useEphemeral).
const (
	useFilesystem          = "filesystem"
	useFilesystemMetadata  = "filesystem-metadata"
	useObjectStore         = "object-store"
	useObjectStoreMetadata = "object-store-metadata"
)

// rookObjectStoreMetadataPools is how many pools Rook makes from a
// CephObjectStore's metadataPool, each with its quota: the store's control,
// meta, log, buckets.index, buckets.non-ec and otp, and .rgw.root (Rook
// v1.17's CreateObjectStorePools, pkg/operator/ceph/object).
const rookObjectStoreMetadataPools = 7

// objectStoreMetadataReplicas is the replication of an object store's
// metadata pools, which the claim does not set.
const objectStoreMetadataReplicas = 3

// metadataQuotaGB is the quota of a filesystem's or object store's
// metadata pool: a tenth of its data pool's, at least 1 GB; unlimited with
// it.
func metadataQuotaGB(data int64) int64 {
	if data == 0 {
		return 0
	}
	return max(data/10, 1)
}

// tenantPools are the tenant's Ceph pools in a storage pool, the volume
// pool first, with the quotas the claim asks for. A filesystem or object
// store switched off but kept (its quotas in held, as it exists) counts
// with the quotas it has.
func tenantPools(c *cloud, pool *v1alpha1.XStorageCluster, held map[string]int64) []tenantPool {
	s := &c.xr.Spec.Storage.Ceph
	ps := []tenantPool{
		{use: useVolumes, field: "volumePool", gb: volumeQuotaGB(c, pool), replicas: replication(c.xr, pool), pools: 1},
		{use: useImages, field: "imagePool", gb: quotaGB(c, pool, s.ImagePool.QuotaGB, v1alpha1.DefaultImageQuotaGB), replicas: replicasIn(pool, s.ImagePool.Replication), pools: 1},
	}
	if s.EphemeralPool.Enabled {
		ps = append(ps, tenantPool{use: useEphemeral, field: "ephemeralPool", gb: quotaGB(c, pool, s.EphemeralPool.QuotaGB, v1alpha1.DefaultEphemeralQuotaGB),
			replicas: replicasIn(pool, s.EphemeralPool.Replication), pools: 1})
	}
	retain := dataPolicy(c.xr) == cephv1alpha1.DataPolicyRetain
	// store adds a filesystem's or object store's data and metadata pools.
	store := func(enabled bool, field, data, meta string, q int64, defaults map[v1alpha1.Size]int64, dataReplicas, metaReplicas int32, metaPools int64) {
		d := tenantPool{use: data, field: field, replicas: replicasIn(pool, dataReplicas), pools: 1}
		m := tenantPool{use: meta, field: field, replicas: replicasIn(pool, metaReplicas), pools: metaPools}
		switch gb, exists := held[data]; {
		case enabled:
			d.gb = quotaGB(c, pool, q, defaults)
			m.gb = metadataQuotaGB(d.gb)
		case exists && retain:
			d.gb, m.gb, d.kept, m.kept = gb, held[meta], true, true
		default:
			return
		}
		ps = append(ps, d, m)
	}
	store(s.Filesystem.Enabled, "filesystem", useFilesystem, useFilesystemMetadata, s.Filesystem.QuotaGB, v1alpha1.DefaultFilesystemQuotaGB,
		s.Filesystem.DataPoolReplication, s.Filesystem.MetadataPoolReplication, 1)
	store(s.ObjectStore.Enabled, "objectStore", useObjectStore, useObjectStoreMetadata, s.ObjectStore.QuotaGB, v1alpha1.DefaultObjectStoreQuotaGB,
		s.ObjectStore.DataPoolReplication, objectStoreMetadataReplicas, rookObjectStoreMetadataPools)
	return ps
}

// askedGB is the raw GB a cloud asks of a storage pool: its pools' quotas
// times their replication; 0 (not accounted) when all are unlimited.
func askedGB(c *cloud, pool *v1alpha1.XStorageCluster, held map[string]int64) int64 {
	var gb int64
	for _, p := range tenantPools(c, pool, held) {
		gb += p.raw()
	}
	return gb
}

// howAskedGB says what the cloud's ask of a storage pool is made of, pool
// by pool, naming the fields that set it.
func howAskedGB(c *cloud, pool *v1alpha1.XStorageCluster, held map[string]int64) string {
	var parts []string
	defaulted := false
	s := &c.xr.Spec.Storage.Ceph
	set := map[string]int64{"volumePool": s.VolumePool.QuotaGB, "imagePool": s.ImagePool.QuotaGB, "ephemeralPool": s.EphemeralPool.QuotaGB,
		"filesystem": s.Filesystem.QuotaGB, "objectStore": s.ObjectStore.QuotaGB}
	for _, p := range tenantPools(c, pool, held) {
		if p.raw() == 0 {
			continue
		}
		name := p.field
		if p.use == useFilesystemMetadata || p.use == useObjectStoreMetadata {
			name += "'s metadata"
		}
		part := fmt.Sprintf("%s %d GB × %d replicas", name, p.gb, p.replicas)
		if p.pools > 1 {
			part += fmt.Sprintf(" × %d pools", p.pools)
		}
		if p.kept {
			part += " (switched off, kept)"
		}
		parts = append(parts, part)
		defaulted = defaulted || set[p.field] == 0 && !p.kept
	}
	how := " (" + strings.Join(parts, " + ")
	if defaulted {
		how += fmt.Sprintf("; where the claim sets no quotaGB, the default of a %s cloud: set spec.storage.ceph.<pool>.quotaGB to ask for less", c.xr.Spec.Size)
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
	// outOfService are hosts the pool's agents report out of service, with
	// the cloud's instances on them (among draining).
	outOfService []string
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
	var hosts, draining, outOfService []string
	var instances int32
	for _, s := range p.Status.Shares {
		shares = append(shares, pool.Share{Cloud: s.Cloud, Claim: s.Claim, Asked: int64(s.Asked), Allocated: int64(s.Allocated)})
		if s.Cloud == c.name {
			held = s.Allocated
			if len(s.Nodes)+len(s.Draining) > 0 {
				hosts = slices.Sorted(slices.Values(slices.Concat(s.Nodes, s.Draining)))
			}
			draining, instances, outOfService = s.Draining, s.Instances, s.OutOfService
		}
	}
	ask := asked(c.xr, p, held)
	if c.removingFrom(usedHypervisorPool, string(p.Spec.Name)) != "" {
		ask = 0 // leaving: it gives back every node it can
	}
	a := allocationIn(c, int64(p.Spec.Workers), shares, int64(ask), int64(held), own, recorded, now)
	a.hosts, a.draining, a.instances, a.outOfService = hosts, draining, instances, outOfService
	return a
}

// storageAllocation is the cloud's share of a storage pool's raw capacity.
// A cloud whose pools exist from before pools decided shares has what
// their quotas take (use.heldGB).
func storageAllocation(c *cloud, p *v1alpha1.XStorageCluster, use storageUse, own pool.Record, recorded bool, now time.Time) allocation {
	shares := make([]pool.Share, 0, len(p.Status.Shares))
	for _, s := range p.Status.Shares {
		shares = append(shares, pool.Share{Cloud: s.Cloud, Claim: s.Claim, Asked: s.AskedGB, Allocated: s.AllocatedGB})
	}
	held := use.heldGB(c, p)
	ask := askedGB(c, p, use.held)
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
