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
