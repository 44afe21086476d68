package main

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/c5c3/consumer-plane/apis/consumer/v1alpha1"
	"github.com/c5c3/consumer-plane/internal/function"
)

// The function requires every pool, control-plane cluster and cloud and
// filters them itself: tenants name pools by spec.name, which no label
// carries, and the shares of a shared pool can only be checked against
// every cloud that consumes it.
const (
	requiredHypervisorPools = "hypervisor-pools"
	requiredStoragePools    = "storage-pools"
	requiredControlPlanes   = "control-plane-clusters"
	requiredClouds          = "openstack-clusters"
)

// requiredClaim is the cloud's claim, for the name of its connection secret.
const requiredClaim = "claim"

// requireClaim asks for the cloud's claim, when it has one: the tenant
// names its connection secret there (spec.writeConnectionSecretToRef),
// which the composite does not carry.
func requireClaim(rsp *fnv1.RunFunctionResponse, c *cloud) {
	if c.claim == "" {
		return
	}
	function.Require(rsp, requiredClaim, v1alpha1.SchemeGroupVersion.String(), "OpenStackCluster", c.claim, c.tenant)
}

// credentialsOf is where the tenant's clouds.yaml goes: the Secret the claim
// names in spec.writeConnectionSecretToRef, else <claim>-credentials, in
// the claim's namespace; for a composite without a claim,
// <composite>-credentials in the Composition's secretNamespace.
func credentialsOf(req *fnv1.RunFunctionRequest, c *cloud) xpv2.SecretReference {
	if c.claim == "" {
		return xpv2.SecretReference{Namespace: c.in.SecretNamespace, Name: c.name + claimCredentialsSuffix}
	}
	ref := xpv2.SecretReference{Namespace: c.tenant, Name: c.claim + claimCredentialsSuffix}
	for _, r := range function.RequiredItems(req, requiredClaim) {
		if n := r.GetResource().GetFields()["spec"].GetStructValue().GetFields()["writeConnectionSecretToRef"].GetStructValue().GetFields()["name"].GetStringValue(); n != "" {
			ref.Name = n
		}
	}
	return ref
}

// require asks for everything the landscape is made of.
func require(rsp *fnv1.RunFunctionResponse) {
	gv := v1alpha1.SchemeGroupVersion.String()
	function.RequireAll(rsp, requiredHypervisorPools, gv, v1alpha1.XHypervisorClusterKind)
	function.RequireAll(rsp, requiredStoragePools, gv, v1alpha1.XStorageClusterKind)
	function.RequireAll(rsp, requiredControlPlanes, gv, v1alpha1.XControlPlaneClusterKind)
	function.RequireAll(rsp, requiredClouds, gv, v1alpha1.XOpenStackClusterKind)
}

// landscape is what the cloud can consume: the region's pools and
// control-plane clusters, and the other clouds that share them.
type landscape struct {
	hypervisorPools []*v1alpha1.XHypervisorCluster
	storagePools    []*v1alpha1.XStorageCluster
	controlPlanes   []*v1alpha1.XControlPlaneCluster
	clouds          []*v1alpha1.XOpenStackCluster
	// skipped are objects that could not be decoded: another composite's
	// mistake must not stop this cloud, so they are left out and reported.
	skipped []string
	// unreadableClouds name the clouds among them: they may hold shares,
	// so no new nodes are allocated while they cannot be read.
	unreadableClouds []string
}

// landscapeOf decodes the required resources; ok is false until Crossplane
// has supplied all of them.
func landscapeOf(req *fnv1.RunFunctionRequest) (l *landscape, ok bool, err error) {
	for _, key := range []string{requiredHypervisorPools, requiredStoragePools, requiredControlPlanes, requiredClouds} {
		if !function.Supplied(req, key) {
			return nil, false, nil
		}
	}
	l = &landscape{}
	if l.hypervisorPools, err = decode[v1alpha1.XHypervisorCluster](req, requiredHypervisorPools, &l.skipped); err != nil {
		return nil, false, err
	}
	if l.storagePools, err = decode[v1alpha1.XStorageCluster](req, requiredStoragePools, &l.skipped); err != nil {
		return nil, false, err
	}
	if l.controlPlanes, err = decode[v1alpha1.XControlPlaneCluster](req, requiredControlPlanes, &l.skipped); err != nil {
		return nil, false, err
	}
	n := len(l.skipped)
	if l.clouds, err = decode[v1alpha1.XOpenStackCluster](req, requiredClouds, &l.skipped); err != nil {
		return nil, false, err
	}
	l.unreadableClouds = l.skipped[n:]
	return l, true, nil
}

func decode[T any](req *fnv1.RunFunctionRequest, key string, skipped *[]string) ([]*T, error) {
	items := function.RequiredItems(req, key)
	out := make([]*T, 0, len(items))
	for _, r := range items {
		o := new(T)
		f := r.GetResource().GetFields()
		what := f["kind"].GetStringValue() + " " + f["metadata"].GetStructValue().GetFields()["name"].GetStringValue()
		if err := function.FromStruct(r.GetResource(), what, o); err != nil {
			*skipped = append(*skipped, fmt.Sprintf("%s (%v)", what, err))
			continue
		}
		out = append(out, o)
	}
	return out, nil
}

// hypervisorPool returns the pool whose spec.name is name.
func (l *landscape) hypervisorPool(name v1alpha1.PoolName) *v1alpha1.XHypervisorCluster {
	for _, p := range l.hypervisorPools {
		if p.Spec.Name == name {
			return p
		}
	}
	return nil
}

// storagePool returns the pool whose spec.name is name.
func (l *landscape) storagePool(name v1alpha1.PoolName) *v1alpha1.XStorageCluster {
	for _, p := range l.storagePools {
		if p.Spec.Name == name {
			return p
		}
	}
	return nil
}

// controlPlane returns the control-plane cluster a cloud names: its claim's
// name, or the composite's when it is not claimed (as the ControlPlaneCluster
// function names its Shoot).
func (l *landscape) controlPlane(name string) *v1alpha1.XControlPlaneCluster {
	for _, c := range l.controlPlanes {
		if n := c.GetLabels()[function.LabelClaimName]; n == name || (n == "" && c.GetName() == name) {
			return c
		}
	}
	return nil
}

// claimOf names a composite for people: its claim's namespace/name, or its
// own name.
func claimOf(labels map[string]string, name string) string {
	if ns, n := labels[function.LabelClaimNamespace], labels[function.LabelClaimName]; ns != "" && n != "" {
		return ns + "/" + n
	}
	return name
}

// share is one cloud's claim on a hypervisor pool.
type share struct {
	cloud string // the cloud's composite name
	who   string // how people know it
	// asked is what the cloud's spec asks for; held what its status
	// records as allocated (0 if nothing yet).
	asked, held int32
	created     string
}

// sharesOf lists the claims of every cloud on a pool, this cloud's from
// its observed composite (the required list may be older than it).
func (l *landscape) sharesOf(self *v1alpha1.XOpenStackCluster, pool *v1alpha1.XHypervisorCluster) []share {
	var out []share
	for _, c := range l.clouds {
		if c.GetName() == self.GetName() {
			continue
		}
		if s, ok := shareOf(c, pool); ok {
			out = append(out, s)
		}
	}
	if s, ok := shareOf(self, pool); ok {
		out = append(out, s)
	}
	return out
}

func shareOf(c *v1alpha1.XOpenStackCluster, pool *v1alpha1.XHypervisorCluster) (share, bool) {
	if !slices.Contains(c.Spec.HypervisorClusters, pool.Spec.Name) {
		return share{}, false
	}
	s := share{cloud: c.GetName(), who: claimOf(c.GetLabels(), c.GetName()),
		created: c.GetCreationTimestamp().UTC().Format("2006-01-02T15:04:05Z")}
	if cp := c.Status.ConsumedPools; cp != nil {
		for _, h := range cp.Hypervisor {
			if h.Name == string(pool.Spec.Name) {
				s.held = h.AllocatedNodes
			}
		}
	}
	s.asked = asked(c, pool, s.held)
	return s, true
}

// asked is the nodes a cloud asks of a pool: its spec's share; without
// one, a dedicated pool whole, else what it already holds (a default share
// never moves, even when defaults change), else the default share of its
// size, at most the pool. It reads nothing but the cloud's own spec and
// status, so every cloud's run computes the same for it.
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

// defaultShare of a cloud's size (the spec's, before a Composition's cap,
// which other clouds' runs cannot see).
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

// allocation is the outcome of a cloud's claim on a pool.
type allocation struct {
	nodes int32
	// asked is what the cloud asked for (its share, or the default), held
	// what its status records.
	asked, held int32
	// free is what the pool had left for this cloud.
	free int32
	// others are the other clouds' allocations, for the refusal message.
	others []share
}

// allocate decides how many of a pool's nodes a cloud gets. Allocations
// are stable: what a cloud's status records is never taken back when
// another cloud arrives or leaves, so nodes never move between clouds.
// Clouds without a record yet are admitted in the order of their creation
// (then name), each only if it fits; every function run sees the same
// order, so two clouds created at once cannot both take the last nodes.
// A cloud that grows keeps its record and gets more only from what is free.
func allocate(self string, capacity int32, shares []share) allocation {
	committed := int32(0)
	var mine share
	var pending []share
	for _, s := range shares {
		switch {
		case s.cloud == self:
			mine = s
		case s.held > 0:
			committed += s.held
		default:
			pending = append(pending, s)
		}
	}
	slices.SortFunc(pending, func(a, b share) int {
		return cmp.Or(cmp.Compare(a.created, b.created), cmp.Compare(a.cloud, b.cloud))
	})
	others := []share{}
	for _, s := range shares {
		if s.cloud != self && s.held > 0 {
			others = append(others, s)
		}
	}
	for _, s := range pending {
		// A pending cloud created after this one waits for it; one
		// created before it is served first, if it fits.
		if mine.held == 0 && cmp.Or(cmp.Compare(s.created, mine.created), cmp.Compare(s.cloud, mine.cloud)) > 0 {
			break
		}
		if committed+s.asked <= capacity {
			committed += s.asked
			s.held = s.asked
			others = append(others, s)
		}
	}
	a := allocation{free: capacity - committed, others: others, asked: mine.asked, held: mine.held}
	switch {
	case mine.asked <= mine.held:
		// Shrinking, or unchanged: always possible.
		a.nodes = mine.asked
	case mine.asked <= a.free:
		a.nodes = mine.asked
	default:
		a.nodes = -1
	}
	return a
}

// describeShares lists allocations for a refusal message.
func describeShares(ss []share) string {
	if len(ss) == 0 {
		return "none"
	}
	parts := make([]string, 0, len(ss))
	for _, s := range ss {
		parts = append(parts, fmt.Sprintf("%s: %d", s.who, s.held))
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}
