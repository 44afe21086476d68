package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// StorageMachines are the bare-metal servers of a storage pool.
type StorageMachines struct {
	// MachinePool is the machine-pool label value of the pool's servers
	// (c5c3.io/machine-pool). When omitted, the pool's name.
	// +optional
	MachinePool MachinePoolLabel `json:"machinePool,omitempty"`
	// MachineClass of the pool's servers: a machine type of the landscape's
	// CloudProfile. One it does not offer makes no Shoot; the claim's
	// ShootReady says so and names those it offers.
	// +kubebuilder:default=baremetal-storage
	// +optional
	MachineClass MachineClass `json:"machineClass,omitempty"`
}

// DeviceClass is the Ceph device class of a storage pool's OSDs.
// +kubebuilder:validation:Enum=hdd;ssd;nvme
type DeviceClass string

// Ceph is the Rook Ceph cluster of a storage pool.
type Ceph struct {
	// OSDCount is the number of OSDs per node.
	// +kubebuilder:default=15
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=64
	// +optional
	OSDCount int32 `json:"osdCount,omitempty"`

	// DeviceClass of the OSDs.
	// +kubebuilder:default=nvme
	// +optional
	DeviceClass DeviceClass `json:"deviceClass,omitempty"`

	// TargetCapacity is the raw capacity the pool is sized for (for example
	// 500Ti or 1Pi).
	// +optional
	TargetCapacity Quantity `json:"targetCapacity,omitempty"`

	// ReplicationFactor is the default replica count of the pool's Ceph pools.
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=5
	// +optional
	ReplicationFactor int32 `json:"replicationFactor,omitempty"`

	// Encrypted OSDs encrypt data at rest (dm-crypt), for tenants whose
	// compliance requires it. Immutable: OSDs cannot be re-encrypted in place.
	// +kubebuilder:default=false
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.ceph.encrypted is immutable: OSDs cannot be re-encrypted in place"
	// +optional
	Encrypted bool `json:"encrypted"`
}

// StorageClusterParameters are the desired properties of a storage pool.
// +kubebuilder:validation:XValidation:rule="self.workers <= self.maxWorkers",message="spec.workers must not exceed spec.maxWorkers"
// +kubebuilder:validation:XValidation:rule="!self.dedicated || (has(self.allowedTenants) && size(self.allowedTenants) > 0)",message="spec.allowedTenants must name the tenant namespace(s) a dedicated pool is for"
// +kubebuilder:validation:XValidation:rule="!has(self.arbiterCluster) || size(self.arbiterCluster) == 0 || (has(self.zones) && size(self.zones) == 2)",message="spec.zones must name the 2 zones a stretched pool (spec.arbiterCluster) spans, one Ceph monitor in each"
// +kubebuilder:validation:XValidation:rule="!has(self.capacity) || !has(self.ceph.targetCapacity) || self.capacity == self.ceph.targetCapacity",message="spec.capacity and spec.ceph.targetCapacity both size the pool: set one of them, or the same size in both"
// +kubebuilder:validation:XValidation:rule="!has(self.labels) || !('dedicated' in self.labels) || self.labels['dedicated'] in ['true', 'false']",message="spec.labels.dedicated marks a dedicated pool, as spec.dedicated does: it must be \"true\" or \"false\""
// +kubebuilder:validation:XValidation:rule="!self.dedicated || !has(self.labels) || !('dedicated' in self.labels) || self.labels['dedicated'] == 'true'",message="spec.labels.dedicated is \"false\" and spec.dedicated is true: a pool is dedicated or shared, drop one of them"
// +kubebuilder:validation:XValidation:rule="(has(oldSelf.labels) && 'dedicated' in oldSelf.labels && oldSelf.labels['dedicated'] == 'true') == (has(self.labels) && 'dedicated' in self.labels && self.labels['dedicated'] == 'true')",message="spec.labels.dedicated is immutable, as spec.dedicated is: create a new pool instead"
type StorageClusterParameters struct {
	PoolPlacement `json:",inline"`
	PoolAccess    `json:",inline"`

	// Workers is the minimum node count of the pool. Ceph needs at least
	// three nodes for its monitors.
	// +kubebuilder:default=5
	// +kubebuilder:validation:Minimum=3
	// +kubebuilder:validation:Maximum=500
	// +optional
	Workers int32 `json:"workers,omitempty"`

	// MaxWorkers is the node count the pool may grow to.
	// +kubebuilder:default=30
	// +kubebuilder:validation:Minimum=3
	// +kubebuilder:validation:Maximum=500
	// +optional
	MaxWorkers int32 `json:"maxWorkers,omitempty"`

	// IronCore selects the bare-metal servers of the pool; when omitted,
	// those of its machine class labelled with the pool's name.
	// +kubebuilder:default={}
	// +optional
	IronCore StorageMachines `json:"ironcore"`

	// Capacity is the raw capacity the pool is sized for, as the C5C3 docs
	// write it (for example 500Ti): the same as spec.ceph.targetCapacity.
	// Set either; both only with the same size.
	// +optional
	Capacity Quantity `json:"capacity,omitempty"`

	// Ceph is the pool's Rook Ceph cluster.
	// +kubebuilder:default={}
	// +optional
	Ceph Ceph `json:"ceph"`

	// ArbiterCluster stretches the pool over exactly two zones: it names the
	// ControlPlaneCluster (its claim) in a third site that runs the
	// tie-breaking Ceph monitor, deployed by the external-arbiter-operator
	// (RemoteCluster and RemoteArbiter). Empty for a pool in one site.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	ArbiterCluster string `json:"arbiterCluster,omitempty"`
}

// StoragePoolPhase is the lifecycle phase of a storage pool. Expanding: Ceph
// is healthy while Gardener applies a change to the pool (new nodes, an
// upgrade).
// +kubebuilder:validation:Enum=Provisioning;Ready;Expanding;Failed
type StoragePoolPhase string

// Storage pool phases.
const (
	StoragePoolPhaseProvisioning StoragePoolPhase = "Provisioning"
	StoragePoolPhaseReady        StoragePoolPhase = "Ready"
	StoragePoolPhaseExpanding    StoragePoolPhase = "Expanding"
	StoragePoolPhaseFailed       StoragePoolPhase = "Failed"
)

// CephHealth is the health Ceph reports.
// +kubebuilder:validation:Enum=HEALTH_OK;HEALTH_WARN;HEALTH_ERR
type CephHealth string

// StorageCapacity of a storage pool: what it is asked for beside what its
// Ceph reports.
type StorageCapacity struct {
	// Asked is the raw capacity the pool is asked for (spec.capacity or
	// spec.ceph.targetCapacity); its nodes are sized for it (the
	// CapacitySized condition).
	// +optional
	Asked string `json:"asked,omitempty"`
	// Total raw capacity, as Ceph reports it.
	// +optional
	Total string `json:"total,omitempty"`
	// Usable is what the pool's Ceph pools can hold of the total at the
	// pool's replication (spec.ceph.replicationFactor; 4 in a stretched
	// pool, two replicas in each zone).
	// +optional
	Usable string `json:"usable,omitempty"`
	// Available raw capacity.
	// +optional
	Available string `json:"available,omitempty"`
	// Used raw capacity.
	// +optional
	Used string `json:"used,omitempty"`
}

// OSDCount counts a Ceph cluster's OSDs.
type OSDCount struct {
	Total int32 `json:"total"`
	Up    int32 `json:"up"`
	In    int32 `json:"in"`
}

// StorageClusterStatus is the observed state of a storage pool.
type StorageClusterStatus struct {
	// Phase of the pool.
	// +optional
	Phase StoragePoolPhase `json:"phase,omitempty"`
	// Dedicated says whether the pool is dedicated, by spec.dedicated or
	// by spec.labels.dedicated.
	// +optional
	Dedicated bool `json:"dedicated,omitempty"`
	// ClusterName is Gardener's technical ID of the pool's Shoot.
	// +optional
	ClusterName string `json:"clusterName,omitempty"`
	// ShootName is the name of the pool's Gardener Shoot in the landscape's
	// project. It is the pool's name when that fits Gardener's limit (project
	// and Shoot name at most 21 characters together); a longer name is cut
	// and ends in a hash of the whole name. It never changes once the Shoot
	// exists.
	// +optional
	ShootName string `json:"shootName,omitempty"`
	// ShootRefusal is set while Gardener refuses the Shoot asked for.
	// +optional
	ShootRefusal *ShootRefusal `json:"shootRefusal,omitempty"`
	// Zones the pool's nodes are spread over: spec.zones, or the zones of
	// its region in the Gardener CloudProfile when it was created.
	// +optional
	Zones []string `json:"zones,omitempty"`
	// DataPlacement is where the pool's Ceph pools keep their replicas and
	// what they survive; a stretched pool's tenant pools take its CRUSH
	// rule.
	// +optional
	DataPlacement *DataPlacement `json:"dataPlacement,omitempty"`
	// Capacity of the pool.
	// +optional
	Capacity *StorageCapacity `json:"capacity,omitempty"`
	// Health of the pool's Ceph cluster: as the pool's storage agent reads
	// it, or, until it reports, as Rook's CephCluster does.
	// +optional
	Health CephHealth `json:"health,omitempty"`
	// HealthChecks are the Ceph health checks that fail, as
	// "SEVERITY NAME: summary" (from the storage agent).
	// +kubebuilder:validation:MaxItems=16
	// +optional
	HealthChecks []string `json:"healthChecks,omitempty"`
	// OSDs of the pool's Ceph cluster (from the storage agent).
	// +optional
	OSDs *OSDCount `json:"osds,omitempty"`
	// Unreachable says why the pool's storage agent cannot be read now
	// (its cluster cannot be reached): health, healthChecks, capacity and
	// osds are then its last report, and the clouds' DataAvailable is
	// Unknown.
	// +optional
	Unreachable string `json:"unreachable,omitempty"`
	// Inventory of the pool's bare-metal servers.
	// +optional
	Inventory *PoolInventory `json:"inventory,omitempty"`
	// ShareableGB is the raw capacity the pool shares out among its clouds,
	// in GB: 85 % (Ceph's nearfull ratio) of the capacity it is asked for,
	// or of what Ceph reports when that is less or nothing is asked.
	// +optional
	ShareableGB int64 `json:"shareableGB,omitempty"`
	// Shares of the pool's raw capacity, by cloud, as the pool decided
	// them (docs/allocation.md). A share never moves once allocated and
	// their sum never exceeds shareableGB.
	// +optional
	Shares []StoragePoolShare `json:"shares,omitempty"`
	// AllocatedGB is the sum of the shares' allocated GB.
	// +optional
	AllocatedGB int64 `json:"allocatedGB,omitempty"`
}

// DataPlacement is where a storage pool's Ceph pools keep their replicas,
// read without CRUSH maps.
type DataPlacement struct {
	// FailureDomain no two replicas share: zone or host (a stretched pool:
	// two replicas per zone, each on another host).
	FailureDomain string `json:"failureDomain"`
	// Replicas kept of every object (Ceph's size).
	Replicas int32 `json:"replicas"`
	// MinReplicas still serve I/O (Ceph's min_size).
	MinReplicas int32 `json:"minReplicas"`
	// Stretched: two replicas in each of the pool's two zones.
	// +optional
	Stretched bool `json:"stretched,omitempty"`
	// CrushRule the tenants' pools of a stretched pool take.
	// +optional
	CrushRule string `json:"crushRule,omitempty"`
	// Survives says what the data survives without stopping I/O.
	Survives string `json:"survives"`
}

// StoragePoolShare is a cloud's share of a storage pool's raw capacity:
// its volume pool's quota times the pool's replication.
type StoragePoolShare struct {
	// Cloud is the consuming XOpenStackCluster's name.
	Cloud string `json:"cloud"`
	// Claim names the cloud as its tenant knows it (namespace/name).
	// +optional
	Claim string `json:"claim,omitempty"`
	// AskedGB is the raw GB the cloud asks for.
	AskedGB int64 `json:"askedGB"`
	// AllocatedGB is the raw GB the pool gives it.
	AllocatedGB int64 `json:"allocatedGB"`
}

// XStorageCluster is a pool of Ceph storage nodes on IronCore bare metal, run
// as a Gardener Shoot with a Rook Ceph cluster. Platform engineers claim it as
// a StorageCluster; OpenStack clouds then consume it by name.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories={crossplane,cobaltcore}
// +kubebuilder:printcolumn:name="REGION",type=string,JSONPath=".spec.region"
// +kubebuilder:printcolumn:name="POOL",type=string,JSONPath=".spec.name"
// +kubebuilder:printcolumn:name="SHOOT",type=string,JSONPath=".status.shootName"
// +kubebuilder:printcolumn:name="DEDICATED",type=boolean,JSONPath=".status.dedicated"
// +kubebuilder:printcolumn:name="DEVICES",type=string,JSONPath=".spec.ceph.deviceClass"
// +kubebuilder:printcolumn:name="CAPACITY",type=string,JSONPath=".status.capacity.asked"
// +kubebuilder:printcolumn:name="RAW",type=string,JSONPath=".status.capacity.total"
// +kubebuilder:printcolumn:name="USABLE",type=string,JSONPath=".status.capacity.usable",priority=1
// +kubebuilder:printcolumn:name="SERVERS",type=integer,JSONPath=".status.inventory.usable"
// +kubebuilder:printcolumn:name="HEALTH",type=string,JSONPath=".status.health"
// +kubebuilder:printcolumn:name="PLACEMENT",type=string,JSONPath=".status.dataPlacement.failureDomain",priority=1
// +kubebuilder:printcolumn:name="PHASE",type=string,JSONPath=".status.phase"
type XStorageCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   StorageClusterParameters `json:"spec"`
	Status StorageClusterStatus     `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// XStorageClusterList is a list of XStorageCluster.
type XStorageClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []XStorageCluster `json:"items"`
}

// TargetCapacity is the raw capacity the pool is sized for: spec.ceph.targetCapacity,
// or spec.capacity as the C5C3 docs write it (the XRD admits both only when
// they are equal); empty when the claim sets neither.
func (p *StorageClusterParameters) TargetCapacity() Quantity {
	if p.Ceph.TargetCapacity != "" {
		return p.Ceph.TargetCapacity
	}
	return p.Capacity
}

// Default fills what the schema leaves to code: spec.labels.dedicated:
// "true" makes the pool dedicated; an omitted spec.name is the claim's
// name, and an omitted machine pool the pool's name. Functions call it on
// every pool they read.
func (x *XStorageCluster) Default() {
	defaultPool(x, &x.Spec.PoolPlacement, &x.Spec.PoolAccess, &x.Spec.IronCore.MachinePool)
}
