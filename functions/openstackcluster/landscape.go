package main

import (
	"cmp"
	"fmt"
	"slices"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/c5c3/consumer-plane/apis/consumer/v1alpha1"
	"github.com/c5c3/consumer-plane/internal/function"
)

// A cloud's reconcile reads only what the cloud consumes (docs/allocation.md):
// each pool it names and its control-plane cluster, found by name. A
// hypervisor pool's status holds every cloud's share of it, which the pool
// decides. The cost of a reconcile is that of the cloud's own pools,
// whatever the size of the landscape.
//
// A pool or control-plane cluster is found by its claim's name (the
// crossplane.io/claim-name label Crossplane sets, so nobody else can claim
// it; a pool's claim is named as its spec.name, which the pool functions
// enforce) or, for one created as a composite, by the composite's own name.
// Both are required, each by name. The one list is of the control-plane
// clusters, for a cloud that names none and is in none yet: it takes the
// only one of its region (a landscape has one or two per region), and once
// placed, it requires that one by name like the others.

// Requirement keys: the kind of cluster (hypervisor, storage, control-plane),
// then its name.
func keyPool(u used, name string) string          { return u.short + "/" + name }
func keyPoolComposite(u used, name string) string { return u.short + "/" + name + "/composite" }

// keyControlPlanes requires every control-plane cluster (a name is a DNS
// label, so it never meets this key).
var keyControlPlanes = usedControlPlane.short + "/*"

// requiredClaim is the cloud's claim, for the name of its connection secret.
const requiredClaim = "claim"

// requireClaim asks for the cloud's claim, when it has one: the tenant
// names its connection secret there (spec.writeConnectionSecretToRef),
// which the composite does not carry. The claim is of the composite's group:
// crossplane.c5c3.io, or c5c3.io as the C5C3 docs write it.
func requireClaim(rsp *fnv1.RunFunctionResponse, c *cloud) {
	if c.claim == "" {
		return
	}
	function.Require(rsp, requiredClaim, c.xr.APIVersion, "OpenStackCluster", c.claim, c.tenant)
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

// requirements lists what the cloud consumes, by requirement key. The keys
// follow from the spec alone, so they are the same from one call to the
// next, as Crossplane needs them to be.
type requirements struct {
	keys []string
}

// require asks for each pool and the control-plane cluster the cloud names,
// and for the pools it is leaving.
func require(rsp *fnv1.RunFunctionResponse, c *cloud, leaving leavingPools) requirements {
	gv := v1alpha1.SchemeGroupVersion.String()
	var r requirements
	cluster := func(u used, name string) {
		function.RequireLabelled(rsp, keyPool(u, name), gv, u.kind, map[string]string{function.LabelClaimName: name})
		function.Require(rsp, keyPoolComposite(u, name), gv, u.kind, name, "")
		r.keys = append(r.keys, keyPool(u, name), keyPoolComposite(u, name))
	}
	for _, name := range slices.Concat(c.xr.Spec.HypervisorClusters, leaving.hypervisor) {
		cluster(usedHypervisorPool, string(name))
	}
	for _, name := range slices.Concat(c.xr.Spec.StorageClusters, leaving.storage) {
		cluster(usedStoragePool, string(name))
	}
	if c.controlPlaneCluster != "" {
		cluster(usedControlPlane, c.controlPlaneCluster)
	} else {
		function.RequireLabelled(rsp, keyControlPlanes, gv, usedControlPlane.kind, map[string]string{})
		r.keys = append(r.keys, keyControlPlanes)
	}
	return r
}

// landscape is what the cloud consumes: its pools and control-plane
// cluster.
type landscape struct {
	hypervisorPools map[v1alpha1.PoolName]*v1alpha1.XHypervisorCluster
	storagePools    map[v1alpha1.PoolName]*v1alpha1.XStorageCluster
	controlPlane    *v1alpha1.XControlPlaneCluster
	// inRegion names the control-plane clusters of the cloud's region,
	// oldest first, when the cloud names none and is in none yet.
	inRegion []string
	// skipped are objects that could not be decoded: another composite's
	// mistake must not stop this cloud, so they are left out and reported.
	skipped []string
}

// landscapeOf decodes the required resources; ok is false until Crossplane
// has supplied all of them. A cloud that names no control-plane cluster
// and is in none yet is placed in the only one of its region.
func landscapeOf(req *fnv1.RunFunctionRequest, c *cloud, r requirements, leaving leavingPools) (l *landscape, ok bool) {
	for _, key := range r.keys {
		if !function.Supplied(req, key) {
			return nil, false
		}
	}
	l = &landscape{
		hypervisorPools: map[v1alpha1.PoolName]*v1alpha1.XHypervisorCluster{},
		storagePools:    map[v1alpha1.PoolName]*v1alpha1.XStorageCluster{},
	}
	for _, name := range slices.Concat(c.xr.Spec.HypervisorClusters, leaving.hypervisor) {
		l.hypervisorPools[name] = named(req, usedHypervisorPool, string(name), &l.skipped,
			func(p *v1alpha1.XHypervisorCluster) bool { return p.Spec.Name == name })
	}
	for _, name := range slices.Concat(c.xr.Spec.StorageClusters, leaving.storage) {
		l.storagePools[name] = named(req, usedStoragePool, string(name), &l.skipped,
			func(p *v1alpha1.XStorageCluster) bool { return p.Spec.Name == name })
	}
	if c.controlPlaneCluster == "" {
		var in []*v1alpha1.XControlPlaneCluster
		in, l.inRegion = ofRegion(req, c.xr.Spec.Region, &l.skipped)
		if len(in) == 1 {
			// The only one of its region: the cloud is placed there (see
			// cloud.placed).
			c.controlPlaneCluster, l.controlPlane = l.inRegion[0], in[0]
		}
		return l, true
	}
	l.controlPlane = named(req, usedControlPlane, c.controlPlaneCluster, &l.skipped,
		func(cp *v1alpha1.XControlPlaneCluster) bool {
			return function.ClusterName(cp.GetLabels(), cp.GetName()) == c.controlPlaneCluster
		})
	return l, true
}

// ofRegion returns the control-plane clusters of a region, oldest first,
// and their names as clouds name them (function.ClusterName). Of two
// composites of one name (claims of it in two namespaces) only the oldest
// counts, as in named; one being deleted is left out: a cloud is never
// placed in a cluster on its way out.
func ofRegion(req *fnv1.RunFunctionRequest, region v1alpha1.Region, skipped *[]string) ([]*v1alpha1.XControlPlaneCluster, []string) {
	all := slices.DeleteFunc(decoded[v1alpha1.XControlPlaneCluster](req, []string{keyControlPlanes}, skipped), func(cp *v1alpha1.XControlPlaneCluster) bool {
		return cp.Spec.Region != region || cp.GetDeletionTimestamp() != nil
	})
	slices.SortFunc(all, oldestFirst)
	var in []*v1alpha1.XControlPlaneCluster
	var names []string
	for _, cp := range all {
		if n := function.ClusterName(cp.GetLabels(), cp.GetName()); !slices.Contains(names, n) {
			in, names = append(in, cp), append(names, n)
		}
	}
	return in, names
}

// composite is what named, ofRegion and oldestFirst read of a composite.
type composite[T any] interface {
	*T
	GetName() string
	GetCreationTimestamp() metav1.Time
}

// decoded returns the composites Crossplane supplied for the requirement
// keys, each once; one that cannot be decoded is left out and named in
// skipped: another composite's mistake must not stop this cloud.
func decoded[T any, P composite[T]](req *fnv1.RunFunctionRequest, keys []string, skipped *[]string) []P {
	var out []P
	for _, key := range keys {
		for _, r := range function.RequiredItems(req, key) {
			o := P(new(T))
			f := r.GetResource().GetFields()
			what := f["kind"].GetStringValue() + " " + f["metadata"].GetStructValue().GetFields()["name"].GetStringValue()
			if err := function.FromStruct(r.GetResource(), what, o); err != nil {
				*skipped = append(*skipped, fmt.Sprintf("%s (%v)", what, err))
				continue
			}
			if !slices.ContainsFunc(out, func(f P) bool { return f.GetName() == o.GetName() }) {
				out = append(out, o)
			}
		}
	}
	return out
}

// oldestFirst orders composites by creation, then by name.
func oldestFirst[P interface {
	GetName() string
	GetCreationTimestamp() metav1.Time
}](a, b P) int {
	ta, tb := a.GetCreationTimestamp(), b.GetCreationTimestamp()
	return cmp.Or(ta.Time.Compare(tb.Time), cmp.Compare(a.GetName(), b.GetName()))
}

// named returns the composite the cloud calls name: of those Crossplane
// supplied by claim name and by composite name that is() accepts, the oldest
// (a second pool of a name is refused by its own function; the first keeps
// serving its clouds).
func named[T any, P composite[T]](req *fnv1.RunFunctionRequest, u used, name string, skipped *[]string, is func(P) bool) P {
	found := slices.DeleteFunc(decoded[T, P](req, []string{keyPool(u, name), keyPoolComposite(u, name)}, skipped), func(o P) bool { return !is(o) })
	if len(found) == 0 {
		return nil
	}
	return slices.MinFunc(found, oldestFirst)
}

// claimOf names a composite for people: its claim's namespace/name, or its
// own name.
func claimOf(labels map[string]string, name string) string {
	if ns, n := labels[function.LabelClaimNamespace], labels[function.LabelClaimName]; ns != "" && n != "" {
		return ns + "/" + n
	}
	return name
}
