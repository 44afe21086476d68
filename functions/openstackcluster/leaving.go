package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/crossplane/function-sdk-go/resource"

	"github.com/c5c3/consumer-plane/apis/consumer/v1alpha1"
)

// A pool removed from the cloud's spec leaves the cloud only once nothing
// of the tenant's runs or is stored there (docs/operations.md, "Moving a
// cloud between pools"): a hypervisor pool once no node it gave the cloud
// runs the cloud's instances, a storage pool once the cloud's Ceph pools
// there hold no data, unless spec.dataPolicy is Delete. Until then the pool
// stays the cloud's as if the spec still named it — its aggregate and
// network, or its Ceph pools, client and volume type, and its usage —
// asking for nothing more, and the claim says what it waits for. A pool
// that is gone holds nothing back.

// leavingPools are the pools the spec no longer names that the cloud still
// used in its last reconcile (their usages are observed), and, for storage
// pools, what data the cloud's Ceph pools there hold. They follow from the
// request alone, so the function asks for the same pools on every call of
// one reconcile.
type leavingPools struct {
	hypervisor []v1alpha1.PoolName
	storage    []v1alpha1.PoolName
	// data says per storage pool what its Ceph pools hold, "" for nothing.
	data map[v1alpha1.PoolName]string
}

func leavingOf(xr *v1alpha1.XOpenStackCluster, observed map[resource.Name]resource.ObservedComposed) leavingPools {
	l := leavingPools{data: map[v1alpha1.PoolName]string{}}
	for name := range observed {
		if n, ok := strings.CutPrefix(string(name), string(usageName(usedHypervisorPool, ""))); ok && !slices.Contains(xr.Spec.HypervisorClusters, v1alpha1.PoolName(n)) {
			l.hypervisor = append(l.hypervisor, v1alpha1.PoolName(n))
		}
		if n, ok := strings.CutPrefix(string(name), string(usageName(usedStoragePool, ""))); ok && !slices.Contains(xr.Spec.StorageClusters, v1alpha1.PoolName(n)) {
			l.storage = append(l.storage, v1alpha1.PoolName(n))
			l.data[v1alpha1.PoolName(n)] = dataIn(observed, n)
		}
	}
	slices.Sort(l.hypervisor)
	slices.Sort(l.storage)
	return l
}

// dataIn says what the cloud's Ceph pools in a storage pool hold, as the
// provider last listed them, or "" when they hold nothing.
func dataIn(observed map[resource.Name]resource.ObservedComposed, st string) string {
	var held []string
	for _, use := range []string{useVolumes, useImages, useEphemeral} {
		o, ok := observed[cephPoolResource(st, use)]
		if !ok {
			continue
		}
		objects, _ := o.Resource.GetInteger("status.atProvider.dataObjects")
		if objects == 0 {
			continue
		}
		images, _ := o.Resource.GetInteger("status.atProvider.images")
		name, _ := o.Resource.GetString("spec.forProvider.name")
		held = append(held, fmt.Sprintf("Ceph pool %s holds %d RBD image(s) in %d object(s)", name, images, objects))
	}
	return strings.Join(held, ", ")
}

// holdLeaving keeps each leaving pool that still holds the cloud's
// instances or data in the cloud's spec, as the last of its kind, and
// records why (see cloud.removing). Run once the pools are known.
func (c *cloud) holdLeaving(l leavingPools, land *landscape) {
	c.removing = map[string]string{}
	for _, name := range l.hypervisor {
		p := land.hypervisorPools[name]
		if p == nil {
			continue
		}
		i := slices.IndexFunc(p.Status.Shares, func(s v1alpha1.PoolShare) bool { return s.Cloud == c.name })
		if i < 0 {
			continue
		}
		s := p.Status.Shares[i]
		if s.Asked == 0 && len(s.Nodes)+len(s.Draining) == 0 {
			continue // given back in full: it goes
		}
		msg := "the pool has not yet taken back the nodes it gave the cloud"
		if s.Asked == 0 {
			msg = fmt.Sprintf("its nodes %s still run the cloud's %d instance(s): migrate or delete them, and the pool leaves the cloud once they are empty",
				strings.Join(slices.Concat(s.Nodes, s.Draining), ", "), s.Instances)
		}
		c.xr.Spec.HypervisorClusters = append(c.xr.Spec.HypervisorClusters, name)
		c.removing[keyPool(usedHypervisorPool, string(name))] = msg
	}
	if c.xr.Spec.DataPolicy == v1alpha1.DataPolicyDelete {
		return // the platform team let the data go with the pools
	}
	for _, name := range l.storage {
		if l.data[name] == "" || land.storagePools[name] == nil {
			continue
		}
		c.xr.Spec.StorageClusters = append(c.xr.Spec.StorageClusters, name)
		c.removing[keyPool(usedStoragePool, string(name))] = l.data[name] +
			": delete or migrate the cloud's volumes, snapshots and images there (a volume in the trash counts), and the pool leaves the cloud once they are gone;" +
			" or the platform team lets the data go (spec.dataPolicy: Delete)"
	}
}

// removingFrom is why a pool no longer in the spec is still the cloud's, or
// "" for a pool the spec names.
func (c *cloud) removingFrom(u used, name string) string {
	return c.removing[keyPool(u, name)]
}

// leavingNotice is the claim's line for a pool held back.
func leavingNotice(u used, name, why string) string {
	field := "spec.hypervisorClusters"
	if u == usedStoragePool {
		field = "spec.storageClusters"
	}
	return fmt.Sprintf("%s %s, removed from %s, stays the cloud's: %s", u.noun, name, field, why)
}
