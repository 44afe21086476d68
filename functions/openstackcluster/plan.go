package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/crossplane/function-sdk-go/resource"

	"github.com/c5c3/consumer-plane/apis/consumer/v1alpha1"
	"github.com/c5c3/consumer-plane/internal/pool"
)

// plan is the cloud's pools and control-plane cluster as policy admits
// them, with what each is waiting on.
type plan struct {
	hypervisor []hypervisorUse
	storage    []storageUse
	// controlPlane is nil while the cluster does not exist.
	controlPlane *v1alpha1.XControlPlaneCluster
	// controlPlaneName is what the cloud calls it.
	controlPlaneName string
	// missing, notReady and failed name what the cloud waits on before it
	// composes anything; provisioning names its pools whose clusters are
	// still being made, on which only the stages in those pools wait (see
	// admitted).
	missing, notReady, failed, provisioning []string
	// requests are growing shares the pool has not given yet, on which
	// the cloud does not wait.
	requests []string
}

// conditionPoolAllocation is the pool's condition that says how it shares
// out its nodes or capacity.
const conditionPoolAllocation = pool.ConditionAllocation

type hypervisorUse struct {
	name string
	pool *v1alpha1.XHypervisorCluster // nil when missing
	// allocation is the cloud's share of the pool (nodes: what it has).
	allocation
	// removing says why a pool the spec no longer names stays the cloud's.
	removing string
	// provisioning: the pool's cluster is still being made.
	provisioning bool
}

type storageUse struct {
	name string
	pool *v1alpha1.XStorageCluster // nil when missing
	// allocation is the cloud's share of the pool's raw capacity (GB).
	allocation
	// volumes: the tenant's volume pool exists there, with quota bytes
	// (0: unlimited).
	volumes     bool
	volumeQuota int64
	// volumeSize is the volume pool's replication, 0 before it exists.
	volumeSize int32
	// held are the quotas (GB, 0 unlimited) of the tenant's other pools
	// there, by use, for those that exist.
	held map[string]int64
	// removing says why a pool the spec no longer names stays the cloud's.
	removing string
	// provisioning: the pool's cluster is still being made.
	provisioning bool
}

// replicas is the replication the cloud's volume pool gets now: the one the
// claim asks for, once the storage pool has granted the raw capacity it
// takes (or asks for none); until then, the one it has. Raising it at once
// would re-replicate the data already there beyond the cloud's share, and
// keep it so if the larger share is refused.
func (s storageUse) replicas(c *v1alpha1.XOpenStackCluster) int32 {
	want := int32(replication(c, s.pool)) //nolint:gosec // at most 10 replicas
	switch {
	case s.volumeSize == 0 || s.volumeSize == want:
		return want
	case s.pool == nil:
		// A pool that is gone decides nothing: what exists stays.
		return s.volumeSize
	case s.asked == 0 || s.has >= s.asked:
		return want
	}
	return s.volumeSize
}

// heldGB is the raw capacity the tenant's pools that exist in the storage
// pool take: their quotas times their replication (the volume pool's as
// it is, not as the claim may just have raised it).
func (s storageUse) heldGB(c *cloud, pool *v1alpha1.XStorageCluster) int64 {
	size := int64(s.volumeSize)
	if size == 0 {
		size = replication(c.xr, pool)
	}
	gb := s.volumeQuota / gib * size
	for _, p := range tenantPools(c, pool, s.held) {
		if q, ok := s.held[p.use]; ok && p.use != useVolumes {
			gb += q * p.replicas * p.pools
		}
	}
	return gb
}

// quotas are the quotas (GB, 0 unlimited) the cloud composes for its Ceph
// pools in the storage pool, by use, and whether it composes its storage
// there yet. A pool the claim asks for that has no quota here is not made
// yet: the storage pool has not given the share it takes.
//   - The storage pool is gone, has given no share yet, or the cloud
//     leaves it: what exists stays as it is, and nothing new is made.
//   - Every pool is unlimited (a dedicated storage pool, no quotas set):
//     nothing is shared out.
//   - The storage pool gave what the cloud asks for: every pool gets the
//     quota the claim asks for, the volume pool the rest of the share.
//   - The cloud asks for more than it has (the pool decides, or has no
//     room): the other pools keep the quotas they have, new ones wait, and
//     the volume pool keeps the rest of what the cloud has. Asking for less
//     takes effect at once (allocationIn).
func (s storageUse) quotas(c *cloud) (map[string]int64, bool) {
	if s.pool == nil || s.has == 0 && s.asked > 0 || s.removing != "" {
		held := make(map[string]int64, len(s.held)+1)
		maps.Copy(held, s.held)
		if s.volumes {
			held[useVolumes] = s.volumeQuota / gib
		}
		return held, s.volumes
	}
	pools := tenantPools(c, s.pool, s.held)
	qs := make(map[string]int64, len(pools))
	if s.asked == 0 {
		for _, p := range pools {
			qs[p.use] = 0
		}
		return qs, true
	}
	var others int64
	for _, p := range pools {
		gb := p.gb
		if s.has < s.asked || p.kept {
			q, ok := s.held[p.use]
			if !ok {
				continue
			}
			gb = q
		}
		if p.use != useVolumes {
			qs[p.use] = gb
			others += gb * p.replicas * p.pools
		}
	}
	// Never 0, which is unlimited: a share smaller than the other pools
	// take (which the pool does not give) leaves the volume pool 1 GB.
	qs[useVolumes] = max((s.has-others)/int64(max(s.replicas(c.xr), 1)), 1)
	return qs, true
}

// resolve applies the policy of pools and tenants. A missing pool only
// makes the cloud wait; a pool in another region, a dedicated pool not
// open to the tenant or a share larger than the pool is refused with an
// error that names the field and the pool, and no plan. A shared pool
// without room is refused too, with the plan: the cloud's request stays
// recorded (see composeUsages) and keeps its place in the pool's queue.
func resolve(c *cloud, l *landscape, observed map[resource.Name]resource.ObservedComposed, now time.Time) (*plan, error) {
	p := &plan{controlPlaneName: c.controlPlaneCluster}
	if err := checkQuotaCaps(c); err != nil {
		return nil, err
	}
	region := c.xr.Spec.Region
	var overCommitted error
	for i, name := range c.xr.Spec.HypervisorClusters {
		field := fmt.Sprintf("spec.hypervisorClusters[%d]", i)
		use := hypervisorUse{name: string(name), removing: c.removingFrom(usedHypervisorPool, string(name))}
		pool := l.hypervisorPools[name]
		if use.removing != "" {
			// Admitted when the spec named it; it asks for nothing now.
			own, recorded := ownRecord(observed, usedHypervisorPool, use.name)
			use.pool, use.allocation = pool, hypervisorAllocation(c, pool, own, recorded, now)
			p.hypervisor = append(p.hypervisor, use)
			p.requests = append(p.requests, leavingNotice(usedHypervisorPool, use.name, use.removing))
			continue
		}
		if pool == nil {
			p.missing = append(p.missing, "hypervisor pool "+use.name)
			p.hypervisor = append(p.hypervisor, use)
			continue
		}
		if err := admit(c, field, "hypervisor pool", pool.Spec.PoolPlacement, pool.Spec.PoolAccess, region); err != nil {
			return nil, err
		}
		shareField := field
		if j := slices.IndexFunc(c.xr.Spec.HypervisorShares, func(s v1alpha1.HypervisorPoolShare) bool { return s.Name == name }); j >= 0 {
			shareField = fmt.Sprintf("spec.hypervisorShares[%d].nodes", j)
			if n := c.xr.Spec.HypervisorShares[j].Nodes; n > pool.Spec.Workers {
				return nil, fmt.Errorf("%s (%d) exceeds the %d nodes of hypervisor pool %s", shareField, n, pool.Spec.Workers, name)
			}
		}
		own, recorded := ownRecord(observed, usedHypervisorPool, use.name)
		a := hypervisorAllocation(c, pool, own, recorded, now)
		use.pool, use.allocation = pool, a
		p.hypervisor = append(p.hypervisor, use)
		switch {
		case a.refused:
			if overCommitted == nil {
				overCommitted = fmt.Errorf("%s: hypervisor pool %s would be over-committed: of its %d nodes, %d are free (%s), and the cloud asks for %d%s",
					shareField, name, pool.Spec.Workers, max(a.free, 0), describeShares(a.others, "nodes"), a.asked, howAsked(c.xr, pool))
			}
		case a.waiting:
			msg := fmt.Sprintf("hypervisor pool %s has not given the cloud the %d nodes it asks for yet (see the pool's %s condition)", use.name, a.asked, conditionPoolAllocation)
			if a.has == 0 {
				p.notReady = append(p.notReady, msg)
			} else {
				p.requests = append(p.requests, msg)
			}
		}
		if shrunk := slices.DeleteFunc(slices.Clone(a.draining), func(n string) bool { return slices.Contains(a.outOfService, n) }); len(shrunk) > 0 {
			// A smaller share frees empty nodes first; these run the
			// cloud's instances, and stay its own until they are empty.
			// (Those out of service are ComputeAvailable's.)
			p.requests = append(p.requests, fmt.Sprintf("hypervisor pool %s gives the cloud %d nodes; %s still run its instances (%d on the pool's nodes it holds) and leave the cloud once they are empty (migrate or delete those instances)",
				use.name, a.has, strings.Join(shrunk, ", "), a.instances))
		}
		switch pool.Status.Phase {
		case v1alpha1.HypervisorPoolPhaseReady, v1alpha1.HypervisorPoolPhaseScaling:
		case v1alpha1.HypervisorPoolPhaseFailed:
			p.failed = append(p.failed, "hypervisor pool "+use.name+" has failed")
		default:
			p.provisioning = append(p.provisioning, fmt.Sprintf("hypervisor pool %s is %s", use.name, phaseOr(string(pool.Status.Phase))))
			p.hypervisor[len(p.hypervisor)-1].provisioning = true
		}
	}
	for i, sc := range c.xr.Spec.StorageClusters {
		field := fmt.Sprintf("spec.storageClusters[%d]", i)
		use := storageUse{name: string(sc), removing: c.removingFrom(usedStoragePool, string(sc))}
		use.volumeQuota, use.volumeSize, use.volumes = observedVolumePool(observed, use.name)
		use.held = observedQuotasGB(observed, use.name)
		pool := l.storagePools[sc]
		if use.removing != "" {
			// Admitted when the spec named it; it keeps what it holds.
			own, recorded := ownRecord(observed, usedStoragePool, use.name)
			use.pool, use.allocation = pool, storageAllocation(c, pool, use, own, recorded, now)
			p.storage = append(p.storage, use)
			p.requests = append(p.requests, leavingNotice(usedStoragePool, use.name, use.removing))
			continue
		}
		if pool == nil {
			p.missing = append(p.missing, "storage pool "+use.name)
			p.storage = append(p.storage, use)
			continue
		}
		if err := admit(c, field, "storage pool", pool.Spec.PoolPlacement, pool.Spec.PoolAccess, region); err != nil {
			return nil, err
		}
		if err := checkVolumeQuotaCap(c, pool); err != nil {
			return nil, err
		}
		own, recorded := ownRecord(observed, usedStoragePool, use.name)
		a := storageAllocation(c, pool, use, own, recorded, now)
		use.pool, use.allocation = pool, a
		p.storage = append(p.storage, use)
		const quotaField = "spec.storage.ceph"
		switch capacity := pool.Status.ShareableGB; {
		case a.asked == 0:
			// Unlimited in a dedicated pool: nothing to share out.
		case capacity == 0:
			p.notReady = append(p.notReady, fmt.Sprintf("storage pool %s does not know the capacity it shares out yet (its spec.ceph.targetCapacity, or what Ceph reports)", use.name))
		case a.asked > capacity && a.asked > a.has:
			// (A cloud already given what it asks for keeps it, should the
			// pool share out less than it gave, as after an upgrade.)
			return nil, fmt.Errorf("%s: the cloud asks for %d GB of storage pool %s%s, which shares out %d GB", quotaField, a.asked, sc, howAskedGB(c, pool, use.held), capacity)
		case a.refused:
			if overCommitted == nil {
				overCommitted = fmt.Errorf("%s: storage pool %s would be over-committed: of its %d GB, %d are free (%s), and the cloud asks for %d%s",
					quotaField, sc, capacity, max(a.free, 0), describeShares(a.others, "GB"), a.asked, howAskedGB(c, pool, use.held))
			}
		case a.waiting:
			msg := fmt.Sprintf("storage pool %s has not given the cloud the %d GB it asks for yet (see the pool's %s condition)", use.name, a.asked, conditionPoolAllocation)
			if a.has == 0 && !use.volumes {
				p.notReady = append(p.notReady, msg)
			} else {
				p.requests = append(p.requests, msg)
			}
		}
		switch pool.Status.Phase {
		case v1alpha1.StoragePoolPhaseReady, v1alpha1.StoragePoolPhaseExpanding:
		case v1alpha1.StoragePoolPhaseFailed:
			p.failed = append(p.failed, "storage pool "+use.name+" has failed")
		default:
			p.provisioning = append(p.provisioning, fmt.Sprintf("storage pool %s is %s", use.name, phaseOr(string(pool.Status.Phase))))
			p.storage[len(p.storage)-1].provisioning = true
		}
	}
	cp := l.controlPlane
	switch {
	case c.controlPlaneCluster == "" && len(l.inRegion) > 1:
		return nil, fmt.Errorf("spec.controlPlaneCluster: region %s has %d control-plane clusters (%s) and the cloud names none: name one of them", region, len(l.inRegion), strings.Join(l.inRegion, ", "))
	case c.controlPlaneCluster == "":
		p.missing = append(p.missing, fmt.Sprintf("a control-plane cluster in region %s (or the one spec.controlPlaneCluster names)", region))
	case cp == nil:
		p.missing = append(p.missing, "control-plane cluster "+c.controlPlaneCluster)
	case cp.Spec.Region != region:
		return nil, fmt.Errorf("spec.controlPlaneCluster: control-plane cluster %s is in region %s, the cloud in %s", c.controlPlaneCluster, cp.Spec.Region, region)
	default:
		p.controlPlane = cp
		switch cp.Status.Phase {
		case v1alpha1.ShootPhaseReady:
		case v1alpha1.ShootPhaseFailed:
			p.failed = append(p.failed, "control-plane cluster "+c.controlPlaneCluster+" has failed")
		default:
			p.notReady = append(p.notReady, fmt.Sprintf("control-plane cluster %s is %s", c.controlPlaneCluster, phaseOr(string(cp.Status.Phase))))
		}
	}
	return p, overCommitted
}

// admit checks a pool's region and, for a dedicated pool, the tenant.
func admit(c *cloud, field, what string, pl v1alpha1.PoolPlacement, a v1alpha1.PoolAccess, region v1alpha1.Region) error {
	if pl.Region != region {
		return fmt.Errorf("%s: %s %s is in region %s, the cloud in %s", field, what, pl.Name, pl.Region, region)
	}
	if !a.Dedicated {
		return nil
	}
	allowed := make([]string, 0, len(a.AllowedTenants))
	for _, t := range a.AllowedTenants {
		allowed = append(allowed, string(t))
	}
	// A refusal never names the tenants a pool serves: which tenants a
	// landscape has is not another tenant's to read.
	if len(allowed) == 0 {
		// Marked dedicated by spec.labels.dedicated, the docs' way, with
		// its tenants not named yet: the platform's choice, not the tenant's.
		return fmt.Errorf("%s: %s %s is dedicated (spec.labels.dedicated) and open to no tenant yet: a platform engineer names the tenant namespaces it serves in its spec.allowedTenants", field, what, pl.Name)
	}
	if c.tenant == "" {
		return fmt.Errorf("%s: %s %s is dedicated to the tenants it names, and a composite without a claim belongs to none", field, what, pl.Name)
	}
	if !slices.Contains(allowed, c.tenant) {
		return fmt.Errorf("%s: %s %s is dedicated to other tenants; tenant %s may not use it", field, what, pl.Name, c.tenant)
	}
	return nil
}

func phaseOr(phase string) string {
	if phase == "" {
		return "not reporting a phase yet"
	}
	return phase
}

func orUnknown(phase string) string {
	if phase == "" {
		return "Unknown"
	}
	return phase
}

// ready reports whether every pool and the control-plane cluster are ready.
func (p *plan) ready() bool { return p.admitted() && len(p.provisioning) == 0 }

// admitted reports whether the cloud may start: every pool exists, policy
// admits it and has given it its share, and its control-plane cluster is
// Ready. Its pools' clusters may still be in the making: the stages in the
// control-plane cluster (its namespace, ControlPlane, admin credential,
// Keystone objects and OVN) do not need them, and run meanwhile, so that
// a cloud created beside its pools is Ready soon after they are instead of
// starting then (#51). What goes into a pool's cluster waits for that pool
// (see composeStorage and composePoolAccess).
func (p *plan) admitted() bool { return len(p.missing)+len(p.notReady)+len(p.failed) == 0 }

// phase of a cloud whose pools are not ready.
func (p *plan) phase(c *cloud) v1alpha1.OpenStackClusterPhase {
	switch {
	case serving(c):
		return v1alpha1.OpenStackClusterPhaseDegraded
	case len(p.failed) > 0:
		return v1alpha1.OpenStackClusterPhaseFailed
	default:
		return v1alpha1.OpenStackClusterPhasePending
	}
}

func (p *plan) reason() string {
	switch {
	case len(p.failed) > 0:
		return "PoolFailed"
	case len(p.missing) > 0:
		return "PoolNotFound"
	default:
		return "Waiting"
	}
}

func (p *plan) message() string {
	if p.ready() {
		parts := make([]string, 0, len(p.hypervisor)+len(p.storage))
		for _, h := range p.hypervisor {
			parts = append(parts, fmt.Sprintf("hypervisor pool %s (%d of %d nodes for this cloud)", h.name, h.has, h.pool.Spec.Workers))
		}
		for _, s := range p.storage {
			if s.asked > 0 {
				parts = append(parts, fmt.Sprintf("storage pool %s (%d of %d GB for this cloud)", s.name, s.has, s.pool.Status.ShareableGB))
			} else {
				parts = append(parts, "storage pool "+s.name)
			}
		}
		msg := strings.Join(parts, ", ") + " and control-plane cluster " + p.controlPlaneName + " are ready"
		if len(p.requests) > 0 {
			msg += "; " + strings.Join(p.requests, "; ")
		}
		return msg
	}
	var parts []string
	parts = append(parts, p.failed...)
	for _, m := range p.missing {
		parts = append(parts, m+" does not exist")
	}
	parts = append(parts, p.provisioning...)
	parts = append(parts, p.notReady...)
	return "waiting: " + strings.Join(parts, "; ")
}

// consumed is status.consumedPools: each pool's phase and nodes, and the
// nodes allocated to this cloud (recorded here, they never move).
func (p *plan) consumed() *v1alpha1.ConsumedPools {
	cp := &v1alpha1.ConsumedPools{}
	if p.controlPlane != nil {
		cp.ControlPlaneCluster = p.controlPlaneName
	}
	for _, h := range p.hypervisor {
		c := v1alpha1.ConsumedHypervisorPool{Name: h.name, Status: "NotFound"}
		if h.pool != nil {
			c.Status, c.NodeCount, c.AllocatedNodes = orUnknown(string(h.pool.Status.Phase)), h.pool.Status.NodeCount, int32(h.has) //nolint:gosec // at most the pool's workers
		}
		c.Removing = h.removing
		cp.Hypervisor = append(cp.Hypervisor, c)
	}
	for _, s := range p.storage {
		c := v1alpha1.ConsumedStoragePool{Name: s.name, Status: "NotFound"}
		if s.pool != nil {
			c.Status, c.Health, c.AllocatedGB = orUnknown(string(s.pool.Status.Phase)), string(s.pool.Status.Health), s.has
			if s.pool.Status.Capacity != nil {
				c.AvailableCapacity = s.pool.Status.Capacity.Available
			}
		}
		c.Removing = s.removing
		cp.Storage = append(cp.Storage, c)
	}
	return cp
}

// hosts maps each hypervisor pool to the nodes the cloud holds there by
// name: its aggregate's hosts. A pool that has not named them has none, and
// the aggregate's hosts are left to the hypervisor operator.
func (p *plan) hosts() map[string][]string {
	m := make(map[string][]string, len(p.hypervisor))
	for _, h := range p.hypervisor {
		if h.hosts != nil {
			m[h.name] = h.hosts
		}
	}
	return m
}

// allocated maps each hypervisor pool to the nodes of this cloud.
func (p *plan) allocated() map[string]int32 {
	m := make(map[string]int32, len(p.hypervisor))
	for _, h := range p.hypervisor {
		m[h.name] = int32(h.has) //nolint:gosec // at most the pool's workers
	}
	return m
}

// heldBack is the plan of a cloud that a pool refused before the cloud
// composed anything: its requests keep their places in the queues of the
// pools that refused it, and it asks nothing of its other pools, which give
// back what they gave it. A cloud holds a pool's share only once every pool
// has room for it: else a claim that never becomes Ready could hold shared
// capacity for as long as it exists. held names the pools it gives back.
func (p *plan) heldBack() (q *plan, held []string) {
	q = &plan{}
	*q = *p
	q.hypervisor = slices.Clone(p.hypervisor)
	for i, h := range q.hypervisor {
		if h.pool != nil && !h.refused {
			q.hypervisor[i].allocation = allocation{}
			held = append(held, "hypervisor pool "+h.name)
		}
	}
	q.storage = slices.Clone(p.storage)
	for i, s := range q.storage {
		if s.pool != nil && !s.refused {
			q.storage[i].allocation = allocation{}
			held = append(held, "storage pool "+s.name)
		}
	}
	return q, held
}
