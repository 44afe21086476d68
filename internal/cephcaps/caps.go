// Package cephcaps says what a tenant's CephX client may do in a storage
// pool's Ceph: use its own RBD pools, and nothing of anyone else's.
package cephcaps

import "strings"

// Tenant are the caps of a tenant's CephX client whose RBD pools are pools.
// The osd caps bound what the client reads and writes; the mgr caps bound
// what it may ask the mgr to do for it: the rbd_support module removes,
// flattens and trashes images with the mgr's own key, so an mgr cap without
// pool= would let one tenant remove another's images in a shared Ceph.
func Tenant(pools ...string) map[string]string {
	grants := make([]string, 0, len(pools))
	for _, p := range pools {
		grants = append(grants, "profile rbd pool="+p)
	}
	scoped := strings.Join(grants, ", ")
	return map[string]string{"mon": "profile rbd", "mgr": scoped, "osd": scoped}
}

// StorageAgentUser is the CephX user (without client.) the storage agent
// reads its Ceph as; the storage pool function composes it as a Rook
// CephClient, whose Secret rook-ceph-client-<user> holds its key under
// <user>.
const StorageAgentUser = "storage-agent"

// StorageAgent are the caps of the storage agent's user: it asks the
// monitors for status, df and the OSD tree and changes nothing, so read on
// the monitors (and the mgr, which answers some reads on newer releases) is
// all it gets: no osd cap, so no object of any pool, and no key (auth
// commands need more than read).
func StorageAgent() map[string]string {
	return map[string]string{"mon": "allow r", "mgr": "allow r"}
}
