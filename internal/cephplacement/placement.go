// Package cephplacement decides where the clouds' Ceph pools in a storage
// pool keep their replicas — over hosts, or stretched over two zones — and
// says what that survives. The storage pool's function (its status) and
// the cloud's (its pools) must agree.
package cephplacement

import (
	"fmt"
	"strings"

	"github.com/c5c3/consumer-plane/apis/consumer/v1alpha1"
)

// Failure domains replicas are spread over.
const (
	DomainZone = "zone"
	DomainHost = "host"
)

// A stretched pool keeps StretchReplicas copies, StretchPerZone in each of
// its two zones, and serves I/O with StretchMinReplicas: one zone's.
const (
	StretchReplicas    = 4
	StretchPerZone     = 2
	StretchMinReplicas = 2
)

// Placement is where a Ceph pool keeps its replicas.
type Placement struct {
	// FailureDomain no two replicas share (a stretched pool: two per zone,
	// each on another host).
	FailureDomain string
	// Replicas (size) and MinReplicas (min_size).
	Replicas, MinReplicas int32
	// Stretched: StretchPerZone replicas in each of Zones.
	Stretched bool
	// Zones of the storage pool.
	Zones []string
}

// Stretched says whether a storage pool is stretched over two zones (it
// names an arbiter).
func Stretched(s *v1alpha1.StorageClusterParameters) bool { return s.ArbiterCluster != "" }

// For is the placement of a cloud's Ceph pool of replicas in the storage
// pool s whose zones are zones (spec.zones, or those its status settled
// on). A stretched pool places every pool alike, whatever replicas it
// asks for; in another a cloud's pools take Ceph's default rule, which
// spreads replicas over hosts (zones are not known to it).
func For(s *v1alpha1.StorageClusterParameters, zones []string, replicas int32) Placement {
	p := Placement{Zones: zones}
	if Stretched(s) {
		p.FailureDomain, p.Replicas, p.MinReplicas, p.Stretched = DomainZone, StretchReplicas, StretchMinReplicas, true
		return p
	}
	p.FailureDomain, p.Replicas, p.MinReplicas = DomainHost, replicas, defaultMinSize(replicas)
	return p
}

// defaultMinSize is Ceph's own min_size of a replicated pool.
func defaultMinSize(size int32) int32 { return max(size-size/2, 1) }

// Survives says in words what the data survives without stopping I/O.
func (p Placement) Survives() string {
	lose := p.Replicas - p.MinReplicas
	switch {
	case p.Stretched:
		return fmt.Sprintf("the loss of a whole zone (%s): %d copies stay in the other, and the arbiter's monitor keeps quorum; "+
			"or of the arbiter site; or of a host in each zone", strings.Join(p.Zones, " or "), StretchPerZone)
	case lose <= 0:
		return fmt.Sprintf("no %s loss without stopping I/O (%d replica(s), served with %d)", p.FailureDomain, p.Replicas, p.MinReplicas)
	case len(p.Zones) > 1:
		return fmt.Sprintf("the loss of %d host(s), not of a zone: replicas are spread over hosts, which may share one of %s", lose, strings.Join(p.Zones, ", "))
	}
	return fmt.Sprintf("the loss of %d host(s)", lose)
}

// Status is the placement as the storage pool's status says it.
func (p Placement) Status() *v1alpha1.DataPlacement {
	d := &v1alpha1.DataPlacement{FailureDomain: p.FailureDomain, Replicas: p.Replicas, MinReplicas: p.MinReplicas,
		Stretched: p.Stretched, Survives: p.Survives()}
	if p.Stretched {
		d.CrushRule = p.CrushRule()
	}
	return d
}

// CrushRule is the rule the provider makes for a stretched pool's tenant
// pools (its Pool's spec.forProvider.stretch): see
// provider/internal/clients/ceph StretchRule (TestStretchRuleNameMatchesThePlacementsName
// there keeps the two names one). It takes every OSD of the zones, never a
// device class: Ceph's stretch mode cannot serve a pool on a device class
// rule once a zone is lost; the storage pool's OSDs all have its class
// (its CephCluster's storage config), so no other OSD is taken.
func (p Placement) CrushRule() string {
	return "stretch_" + DomainZone
}

// Rook is a Rook pool's spec (a CephBlockPool's, or a CephFilesystem's or
// CephObjectStore's pool) placed so: its failure domain and replicated
// settings, with parameters (nil: none) — for a stretched pool two
// replicas per zone on other hosts and min_size, as Rook's stretch clusters
// place them, on no device class (see CrushRule: Rook's rule would take the
// class's shadow tree, which stretch mode cannot serve with a zone lost).
func (p Placement) Rook(parameters map[string]any) map[string]any {
	replicated := map[string]any{"size": int64(p.Replicas), "requireSafeReplicaSize": p.Replicas > 1}
	out := map[string]any{"failureDomain": p.FailureDomain, "replicated": replicated}
	if p.Stretched {
		replicated["replicasPerFailureDomain"] = int64(StretchPerZone)
		replicated["subFailureDomain"] = DomainHost
		if parameters == nil {
			parameters = map[string]any{}
		}
		parameters["min_size"] = fmt.Sprint(p.MinReplicas)
	}
	if parameters != nil {
		out["parameters"] = parameters
	}
	return out
}
