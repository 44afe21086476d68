package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Size is a preset of control-plane replicas (see the size map in the
// OpenStackCluster function).
// +kubebuilder:validation:Enum=small;medium;large;xlarge
type Size string

// Sizes of an OpenStack control plane.
const (
	SizeSmall  Size = "small"
	SizeMedium Size = "medium"
	SizeLarge  Size = "large"
	SizeXLarge Size = "xlarge"
)

// HypervisorPoolShare is the nodes a cloud reserves of a hypervisor pool it
// consumes.
type HypervisorPoolShare struct {
	// Name of the hypervisor pool (its spec.name); it must be listed in
	// spec.hypervisorClusters.
	Name PoolName `json:"name"`

	// Nodes of the pool reserved for this cloud. Shares never move once
	// allocated, and the sum of all clouds' shares never exceeds the pool.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	Nodes int32 `json:"nodes"`
}

// DefaultVolumeQuotaGB is the volume pool quota of a cloud that sets none
// (spec.storage.ceph.volumePool.quotaGB 0), by its size, in the shared
// storage pools it uses.
var DefaultVolumeQuotaGB = map[Size]int64{SizeSmall: 1024, SizeMedium: 4096, SizeLarge: 16384, SizeXLarge: 65536}

// The quotas of the tenant's other Ceph pools when the claim sets none
// (their quotaGB 0), by the cloud's size, in the shared storage pools it
// uses: every pool of a tenant in a shared Ceph has a quota, so that no
// tenant fills the Ceph its neighbours write to (Ceph stops every pool's
// writes at its full ratio).
var (
	DefaultImageQuotaGB       = map[Size]int64{SizeSmall: 256, SizeMedium: 512, SizeLarge: 1024, SizeXLarge: 2048}
	DefaultEphemeralQuotaGB   = map[Size]int64{SizeSmall: 512, SizeMedium: 2048, SizeLarge: 8192, SizeXLarge: 32768}
	DefaultFilesystemQuotaGB  = map[Size]int64{SizeSmall: 256, SizeMedium: 1024, SizeLarge: 4096, SizeXLarge: 16384}
	DefaultObjectStoreQuotaGB = map[Size]int64{SizeSmall: 256, SizeMedium: 1024, SizeLarge: 4096, SizeXLarge: 16384}
)

// DefaultNodeShares is what a cloud without a spec.hypervisorShares entry
// for a shared pool asks of it, by its size: never more than the pool has.
// A default share the cloud was given stays its share when defaults change.
var DefaultNodeShares = map[Size]int32{SizeSmall: 2, SizeMedium: 4, SizeLarge: 8, SizeXLarge: 16}

// Services are the OpenStack services of a cloud. Keystone is always on.
type Services struct {
	// +kubebuilder:default=true
	// +optional
	Nova bool `json:"nova"`
	// +kubebuilder:default=true
	// +optional
	Neutron bool `json:"neutron"`
	// +kubebuilder:default=true
	// +optional
	Cinder bool `json:"cinder"`
	// +kubebuilder:default=true
	// +optional
	Glance bool `json:"glance"`
	// +kubebuilder:default=true
	// +optional
	Horizon bool `json:"horizon"`
	// +kubebuilder:default=false
	// +optional
	Octavia bool `json:"octavia"`
	// +kubebuilder:default=false
	// +optional
	Manila bool `json:"manila"`
	// +kubebuilder:default=false
	// +optional
	Barbican bool `json:"barbican"`
}

// CortexPipeline is a scheduling pipeline of Cortex.
// +kubebuilder:validation:Enum=nova;cinder;manila
type CortexPipeline string

// Cortex is the cloud's initial-placement and rebalancing scheduler.
type Cortex struct {
	// +kubebuilder:default=true
	// +optional
	Enabled bool `json:"enabled"`
	// Pipelines Cortex schedules for.
	// +kubebuilder:default={nova,cinder}
	// +kubebuilder:validation:MaxItems=3
	// +listType=set
	// +optional
	Pipelines []CortexPipeline `json:"pipelines,omitempty"`
}

// TLS of the cloud's public endpoints.
// The has() guards let the rule hold for the schema's own default ({}),
// which the API server validates before nested defaults apply.
// +kubebuilder:validation:XValidation:rule="!has(self.enabled) || !self.enabled || (has(self.issuerRef) && size(self.issuerRef) > 0)",message="spec.tls.issuerRef must name a cert-manager issuer when spec.tls.enabled is true"
type TLS struct {
	// +kubebuilder:default=true
	// +optional
	Enabled bool `json:"enabled"`
	// IssuerRef names the cert-manager ClusterIssuer of the endpoints'
	// certificates; by default the landscape's own CA issuer.
	// +kubebuilder:default=c5c3-ca
	// +kubebuilder:validation:MaxLength=253
	// +optional
	IssuerRef string `json:"issuerRef,omitempty"`
}

// Network settings of the cloud.
type Network struct {
	// ExternalNetwork names the provider network floating IPs come from.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	ExternalNetwork string `json:"externalNetwork,omitempty"`
	// MTU of tenant networks. Not applied yet: the c5c3 ControlPlane has no
	// field for Neutron's MTU, so a cloud that sets it says so in its
	// Supported condition (status.unsupportedSettings). Without it Neutron
	// takes its own default (the physical MTU less the overlay's headers).
	// +kubebuilder:validation:Minimum=1280
	// +kubebuilder:validation:Maximum=9000
	// +optional
	MTU int32 `json:"mtu,omitempty"`
}

// Compression is a Ceph pool's compression mode.
// +kubebuilder:validation:Enum=none;passive;aggressive;force
type Compression string

// VolumePool is the tenant's RBD pool for Cinder volumes.
type VolumePool struct {
	// Replication is the pool's replica count.
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=5
	// +optional
	Replication int32 `json:"replication,omitempty"`
	// +kubebuilder:default=aggressive
	// +optional
	Compression Compression `json:"compression,omitempty"`
	// QuotaGB caps the pool, in GB. A shared storage pool is shared out by
	// these quotas (times the replication, of its raw capacity): there 0
	// asks for the default of the cloud's size (DefaultVolumeQuotaGB); on
	// a dedicated pool 0 means unlimited. The Composition may cap it. At
	// most 2^33-1 GB: the quota is set in bytes, which must fit an int64.
	// +kubebuilder:default=0
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=8589934591
	// +optional
	QuotaGB int64 `json:"quotaGB"`
}

// ImagePool is the tenant's RBD pool for Glance images.
type ImagePool struct {
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=5
	// +optional
	Replication int32 `json:"replication,omitempty"`
	// +kubebuilder:default=aggressive
	// +optional
	Compression Compression `json:"compression,omitempty"`
	// QuotaGB caps the pool, in GB, as volumePool.quotaGB does:
	// 0 asks for the default of the cloud's size (DefaultImageQuotaGB) in
	// a shared storage pool and is unlimited in a dedicated one. It counts
	// in the cloud's share of the storage pool, times its replication.
	// +kubebuilder:default=0
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=8589934591
	// +optional
	QuotaGB int64 `json:"quotaGB"`
}

// EphemeralPool is the tenant's RBD pool for Nova ephemeral disks.
type EphemeralPool struct {
	// +kubebuilder:default=true
	// +optional
	Enabled bool `json:"enabled"`
	// +kubebuilder:default=2
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=5
	// +optional
	Replication int32 `json:"replication,omitempty"`
	// QuotaGB caps the pool, in GB, as volumePool.quotaGB does:
	// 0 asks for the default of the cloud's size (DefaultEphemeralQuotaGB) in
	// a shared storage pool and is unlimited in a dedicated one. It counts
	// in the cloud's share of the storage pool, times its replication.
	// +kubebuilder:default=0
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=8589934591
	// +optional
	QuotaGB int64 `json:"quotaGB"`
}

// Filesystem is the tenant's CephFS for Manila.
type Filesystem struct {
	// +kubebuilder:default=false
	// +optional
	Enabled bool `json:"enabled"`
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=5
	// +optional
	DataPoolReplication int32 `json:"dataPoolReplication,omitempty"`
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=5
	// +optional
	MetadataPoolReplication int32 `json:"metadataPoolReplication,omitempty"`
	// QuotaGB caps the filesystem's data pool, in GB, as volumePool.quotaGB does:
	// 0 asks for the default of the cloud's size (DefaultFilesystemQuotaGB) in
	// a shared storage pool and is unlimited in a dedicated one. It counts
	// in the cloud's share of the storage pool, times its replication.
	// Its metadata pool gets a tenth of that, at least 1 GB, counted too.
	// +kubebuilder:default=0
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=8589934591
	// +optional
	QuotaGB int64 `json:"quotaGB"`
}

// ObjectStore is the tenant's RGW for Swift and S3.
type ObjectStore struct {
	// +kubebuilder:default=false
	// +optional
	Enabled bool `json:"enabled"`
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=5
	// +optional
	DataPoolReplication int32 `json:"dataPoolReplication,omitempty"`
	// QuotaGB caps the object store's data pool, in GB, as volumePool.quotaGB does:
	// 0 asks for the default of the cloud's size (DefaultObjectStoreQuotaGB) in
	// a shared storage pool and is unlimited in a dedicated one. It counts
	// in the cloud's share of the storage pool, times its replication.
	// Each of its metadata pools (Rook makes seven: .rgw.root, control,
	// meta, log, buckets.index, buckets.non-ec, otp) gets a tenth of that,
	// at least 1 GB, counted too.
	// +kubebuilder:default=0
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=8589934591
	// +optional
	QuotaGB int64 `json:"quotaGB"`
}

// CephStorage is the tenant's isolated Ceph storage in every storage pool
// the cloud consumes.
type CephStorage struct {
	// +kubebuilder:default={}
	// +optional
	VolumePool VolumePool `json:"volumePool"`
	// +kubebuilder:default={}
	// +optional
	ImagePool ImagePool `json:"imagePool"`
	// +kubebuilder:default={}
	// +optional
	EphemeralPool EphemeralPool `json:"ephemeralPool"`
	// +kubebuilder:default={}
	// +optional
	Filesystem Filesystem `json:"filesystem"`
	// +kubebuilder:default={}
	// +optional
	ObjectStore ObjectStore `json:"objectStore"`
}

// Storage of the cloud.
type Storage struct {
	// +kubebuilder:default={}
	// +optional
	Ceph CephStorage `json:"ceph"`
}

// Bounds of the quota fields, as their schema states them (the functions
// check them again for composites admitted before a schema had them).
const (
	// MaxQuotaLimit is the largest limit Nova, Cinder and Neutron store.
	MaxQuotaLimit = 1<<31 - 1
	// MaxRAMGB is the largest spec.quotas.compute.ramGB: Nova's RAM limit
	// is in MiB.
	MaxRAMGB = MaxQuotaLimit / 1024
	// MaxCephQuotaGB is the largest Ceph pool quota whose bytes fit an
	// int64.
	MaxCephQuotaGB = 1<<33 - 1
)

// ComputeQuota of the cloud's default project. -1 means unlimited. Nova,
// Cinder and Neutron store quota limits as 32-bit integers (their APIs
// refuse more than 2^31-1), so that is each limit's maximum; the RAM
// limit is set in MiB, so ramGB stops at (2^31-1)/1024.
type ComputeQuota struct {
	// +kubebuilder:validation:Minimum=-1
	// +kubebuilder:validation:Maximum=2147483647
	// +optional
	Cores *int64 `json:"cores,omitempty"`
	// +kubebuilder:validation:Minimum=-1
	// +kubebuilder:validation:Maximum=2097151
	// +optional
	RAMGB *int64 `json:"ramGB,omitempty"`
	// +kubebuilder:validation:Minimum=-1
	// +kubebuilder:validation:Maximum=2147483647
	// +optional
	Instances *int64 `json:"instances,omitempty"`
}

// VolumeQuota of the cloud's default project. -1 means unlimited.
type VolumeQuota struct {
	// +kubebuilder:validation:Minimum=-1
	// +kubebuilder:validation:Maximum=2147483647
	// +optional
	Gigabytes *int64 `json:"gigabytes,omitempty"`
	// +kubebuilder:validation:Minimum=-1
	// +kubebuilder:validation:Maximum=2147483647
	// +optional
	Volumes *int64 `json:"volumes,omitempty"`
	// +kubebuilder:validation:Minimum=-1
	// +kubebuilder:validation:Maximum=2147483647
	// +optional
	Snapshots *int64 `json:"snapshots,omitempty"`
}

// NetworkQuota of the cloud's default project. -1 means unlimited.
type NetworkQuota struct {
	// +kubebuilder:validation:Minimum=-1
	// +kubebuilder:validation:Maximum=2147483647
	// +optional
	Networks *int64 `json:"networks,omitempty"`
	// +kubebuilder:validation:Minimum=-1
	// +kubebuilder:validation:Maximum=2147483647
	// +optional
	Ports *int64 `json:"ports,omitempty"`
	// +kubebuilder:validation:Minimum=-1
	// +kubebuilder:validation:Maximum=2147483647
	// +optional
	Routers *int64 `json:"routers,omitempty"`
	// +kubebuilder:validation:Minimum=-1
	// +kubebuilder:validation:Maximum=2147483647
	// +optional
	FloatingIPs *int64 `json:"floatingIPs,omitempty"`
}

// Quotas of the cloud; unset quotas keep OpenStack's defaults.
type Quotas struct {
	// +optional
	Compute *ComputeQuota `json:"compute,omitempty"`
	// +optional
	Volume *VolumeQuota `json:"volume,omitempty"`
	// +optional
	Network *NetworkQuota `json:"network,omitempty"`
}

// OpenStackClusterParameters are the desired properties of a tenant's cloud.
// +kubebuilder:validation:XValidation:rule="!has(self.hypervisorShares) || self.hypervisorShares.all(s, s.name in self.hypervisorClusters)",message="spec.hypervisorShares may only name pools listed in spec.hypervisorClusters"
type OpenStackClusterParameters struct {
	// Region of the cloud; every pool it consumes must be in it.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.region is immutable"
	Region Region `json:"region"`

	// Size presets the control plane's replica counts.
	Size Size `json:"size"`

	// OpenStackRelease of the control plane; it can only move forward.
	// +kubebuilder:default="2025.2"
	// +kubebuilder:validation:Pattern=`^[0-9]{4}\.[12]$`
	// +kubebuilder:validation:XValidation:rule="self >= oldSelf",message="spec.openStackRelease cannot be downgraded"
	// +optional
	OpenStackRelease string `json:"openStackRelease,omitempty"`

	// HypervisorClusters are the hypervisor pools the cloud's compute runs
	// on, by name (their spec.name), each named once.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +listType=set
	HypervisorClusters []PoolName `json:"hypervisorClusters"`

	// HypervisorShares reserve a number of nodes of hypervisor pools for
	// this cloud. Without an entry here, a dedicated pool is the cloud's
	// whole and a shared pool gives the default share of the cloud's size
	// (small 2, medium 4, large 8, xlarge 16 nodes, at most the pool's
	// workers). Shares never move once allocated (a default share is kept
	// as allocated); a claim whose share does not fit in what the pool has
	// free is refused and says so.
	// +kubebuilder:validation:MaxItems=16
	// +listType=map
	// +listMapKey=name
	// +optional
	HypervisorShares []HypervisorPoolShare `json:"hypervisorShares,omitempty"`

	// StorageClusters are the storage pools the cloud's volumes, images and
	// ephemeral disks live in, each named once.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=8
	// +listType=set
	StorageClusters []PoolName `json:"storageClusters"`

	// ControlPlaneCluster names the ControlPlaneCluster (its claim) that hosts
	// the cloud's control plane. When empty, the cloud is placed in the only
	// control-plane cluster of its region, whatever its name, and stays
	// there (status.consumedPools.controlPlaneCluster); a region with
	// several refuses a cloud that names none.
	// +optional
	ControlPlaneCluster ClusterName `json:"controlPlaneCluster,omitempty"`

	// Services of the cloud.
	// +kubebuilder:default={}
	// +optional
	Services Services `json:"services"`

	// Cortex scheduling.
	// +kubebuilder:default={}
	// +optional
	Cortex Cortex `json:"cortex"`

	// TLS of the public endpoints.
	// +kubebuilder:default={}
	// +optional
	TLS TLS `json:"tls"`

	// Network settings.
	// +kubebuilder:default={}
	// +optional
	Network Network `json:"network"`

	// Storage isolation settings.
	// +kubebuilder:default={}
	// +optional
	Storage Storage `json:"storage"`

	// Quotas of the cloud's default project.
	// +optional
	Quotas *Quotas `json:"quotas,omitempty"`

	// DataPolicy is what becomes of the tenant's data in a storage pool
	// (its Ceph volumes, images and ephemeral pools) when the pool leaves
	// the cloud or the cloud is deleted. Retain (the default): a storage
	// pool removed from spec.storageClusters stays the cloud's, and its
	// claim says so, until its Ceph pools are empty; a deleted cloud
	// leaves its Ceph pools that hold data in Ceph, detached. Delete: the
	// data goes with them. The platform team's choice: the examples'
	// admission policy (examples/crossplane/claim-composition-policy.yaml)
	// lets only the platform team set or change it.
	// +kubebuilder:default=Retain
	// +kubebuilder:validation:Enum=Retain;Delete
	// +optional
	DataPolicy DataPolicy `json:"dataPolicy,omitempty"`
}

// DataPolicy says whether a cloud's data may go with the cloud's pools.
type DataPolicy string

// Data policies of a cloud.
const (
	DataPolicyRetain DataPolicy = "Retain"
	DataPolicyDelete DataPolicy = "Delete"
)

// OpenStackClusterPhase is the lifecycle phase of a cloud. Refused: policy
// refuses the claim (its PoolsReady condition says why) and nothing is
// composed for it.
// +kubebuilder:validation:Enum=Pending;Provisioning;Ready;Degraded;Failed;Refused
type OpenStackClusterPhase string

// Phases of a cloud.
const (
	OpenStackClusterPhasePending      OpenStackClusterPhase = "Pending"
	OpenStackClusterPhaseProvisioning OpenStackClusterPhase = "Provisioning"
	OpenStackClusterPhaseReady        OpenStackClusterPhase = "Ready"
	OpenStackClusterPhaseDegraded     OpenStackClusterPhase = "Degraded"
	OpenStackClusterPhaseFailed       OpenStackClusterPhase = "Failed"
	OpenStackClusterPhaseRefused      OpenStackClusterPhase = "Refused"
)

// Endpoints of the cloud.
type Endpoints struct {
	// +optional
	Keystone string `json:"keystone,omitempty"`
	// +optional
	Horizon string `json:"horizon,omitempty"`
	// +optional
	Nova string `json:"nova,omitempty"`
}

// ConsumedHypervisorPool is a hypervisor pool as the cloud uses it.
type ConsumedHypervisorPool struct {
	Name string `json:"name"`
	// Status of the pool (its phase).
	// +optional
	Status string `json:"status,omitempty"`
	// NodeCount of the pool.
	// +optional
	NodeCount int32 `json:"nodeCount,omitempty"`
	// AllocatedNodes of the pool reserved for this cloud.
	// +optional
	AllocatedNodes int32 `json:"allocatedNodes,omitempty"`
	// Removing says why a pool no longer in spec.hypervisorClusters is
	// still the cloud's: its nodes that still run the cloud's instances.
	// +optional
	Removing string `json:"removing,omitempty"`
}

// ConsumedStoragePool is a storage pool as the cloud uses it.
type ConsumedStoragePool struct {
	Name string `json:"name"`
	// +optional
	Status string `json:"status,omitempty"`
	// +optional
	AvailableCapacity string `json:"availableCapacity,omitempty"`
	// Health of the pool's Ceph cluster.
	// +optional
	Health string `json:"health,omitempty"`
	// AllocatedGB is the cloud's share of the pool's raw capacity, as the
	// pool gave it: its volume pool quota times the replication.
	// +optional
	AllocatedGB int64 `json:"allocatedGB,omitempty"`
	// Removing says why a pool no longer in spec.storageClusters is still
	// the cloud's: its Ceph pools that still hold data (spec.dataPolicy).
	// +optional
	Removing string `json:"removing,omitempty"`
}

// ConsumedPools of the cloud.
type ConsumedPools struct {
	// ControlPlaneCluster the cloud's control plane runs in: the one
	// spec.controlPlaneCluster names, else the one of the cloud's region
	// it was placed in (it stays there).
	// +optional
	ControlPlaneCluster string `json:"controlPlaneCluster,omitempty"`
	// +optional
	Hypervisor []ConsumedHypervisorPool `json:"hypervisor,omitempty"`
	// +optional
	Storage []ConsumedStoragePool `json:"storage,omitempty"`
}

// CephPoolStatus is the state of one of the tenant's Ceph pools.
// +kubebuilder:validation:Enum=Creating;Ready;Degraded;Failed
type CephPoolStatus string

// States of the tenant's Ceph pools.
const (
	CephPoolCreating CephPoolStatus = "Creating"
	CephPoolReady    CephPoolStatus = "Ready"
	CephPoolDegraded CephPoolStatus = "Degraded"
	CephPoolFailed   CephPoolStatus = "Failed"
)

// CephPool is the observed state of one of the tenant's Ceph pools.
type CephPool struct {
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	Status CephPoolStatus `json:"status,omitempty"`
	// +optional
	UsedBytes int64 `json:"usedBytes,omitempty"`
	// +optional
	AvailableBytes int64 `json:"availableBytes,omitempty"`
	// QuotaGB is the quota the pool is given (a data pool's, for an object
	// store), which its share of the storage pool holds; absent while
	// unlimited.
	// +optional
	QuotaGB int64 `json:"quotaGB,omitempty"`
	// Placement as Ceph reports the pool: its CRUSH rule, size and
	// min_size (a stretched storage pool's: stretch_zone, 4, 2).
	// +optional
	Placement string `json:"placement,omitempty"`
}

// CephFilesystemStatus is the observed state of the tenant's CephFS.
type CephFilesystemStatus struct {
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	Status CephPoolStatus `json:"status,omitempty"`
	// +optional
	MDSActive int32 `json:"mdsActive,omitempty"`
	// QuotaGB is its data pool's quota; absent while unlimited.
	// +optional
	QuotaGB int64 `json:"quotaGB,omitempty"`
}

// CephClient is the tenant's CephX client. Its key is only ever in the
// referenced Secret, in the cloud's namespace of the control-plane cluster.
type CephClient struct {
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	SecretRef *SecretReference `json:"secretRef,omitempty"`
}

// CephResources of the cloud in one storage pool.
type CephResources struct {
	// StorageCluster is the storage pool (its spec.name).
	StorageCluster string `json:"storageCluster"`
	// +optional
	VolumePool *CephPool `json:"volumePool,omitempty"`
	// +optional
	ImagePool *CephPool `json:"imagePool,omitempty"`
	// +optional
	EphemeralPool *CephPool `json:"ephemeralPool,omitempty"`
	// +optional
	Filesystem *CephFilesystemStatus `json:"filesystem,omitempty"`
	// +optional
	ObjectStore *CephPool `json:"objectStore,omitempty"`
	// +optional
	Client *CephClient `json:"client,omitempty"`
}

// GatewayChassisGroup is the cloud's OVN HA chassis group of one hypervisor
// pool: the pool's chassis registered in the cloud's Southbound database,
// which may host the gateway ports of networks in the pool's availability
// zone.
type GatewayChassisGroup struct {
	// HypervisorCluster is the pool (its spec.name, the availability zone).
	HypervisorCluster string `json:"hypervisorCluster"`
	// Name of the HA_Chassis_Group row in the cloud's Northbound database.
	// +optional
	Name string `json:"name,omitempty"`
	// Chassis are the group's members, highest priority first: gateway
	// chassis (enable-chassis-as-gw) before the others.
	// +optional
	Chassis []string `json:"chassis,omitempty"`
	// +optional
	Status CephPoolStatus `json:"status,omitempty"`
}

// NetworkStatus is what the consumer plane made in the cloud's OVN.
type NetworkStatus struct {
	// Northbound are the endpoints of the cloud's OVN Northbound database,
	// as its control plane publishes them.
	// +optional
	Northbound []string `json:"northbound,omitempty"`
	// Gateways are the HA chassis groups, one per hypervisor pool.
	// +optional
	Gateways []GatewayChassisGroup `json:"gateways,omitempty"`
}

// OpenStackClusterStatus is the observed state of a cloud.
type OpenStackClusterStatus struct {
	// +optional
	Phase OpenStackClusterPhase `json:"phase,omitempty"`
	// +optional
	Endpoints *Endpoints `json:"endpoints,omitempty"`
	// +optional
	ConsumedPools *ConsumedPools `json:"consumedPools,omitempty"`
	// CephResources of the cloud, per storage pool it consumes.
	// +optional
	CephResources []CephResources `json:"cephResources,omitempty"`
	// Network is the cloud's OVN: the gateway chassis group per hypervisor
	// pool (with Neutron and at least one hypervisor pool).
	// +optional
	Network *NetworkStatus `json:"network,omitempty"`
	// UnsupportedServices are enabled services the control plane cannot run
	// yet; they are listed instead of being silently dropped.
	// +optional
	UnsupportedServices []string `json:"unsupportedServices,omitempty"`
	// UnservedServices are enabled services (nova, cinder, neutron) the
	// cloud's Keystone catalog has no endpoint for: their objects are not
	// composed, and the cloud is not Ready until the catalog serves them.
	// +optional
	UnservedServices []string `json:"unservedServices,omitempty"`
	// UnsupportedSettings are spec fields the ControlPlane cannot carry yet
	// (by field path); they take effect once the c5c3-operator supports them.
	// +optional
	UnsupportedSettings []string `json:"unsupportedSettings,omitempty"`
}

// XOpenStackCluster is a tenant's OpenStack cloud: a control plane in the
// region's control-plane cluster, consuming hypervisor and storage pools with
// per-tenant isolation. Tenants claim it as an OpenStackCluster in their
// namespace.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories={crossplane,cobaltcore}
// +kubebuilder:printcolumn:name="REGION",type=string,JSONPath=".spec.region"
// +kubebuilder:printcolumn:name="SIZE",type=string,JSONPath=".spec.size"
// +kubebuilder:printcolumn:name="RELEASE",type=string,JSONPath=".spec.openStackRelease"
// +kubebuilder:printcolumn:name="PHASE",type=string,JSONPath=".status.phase"
// +kubebuilder:printcolumn:name="KEYSTONE",type=string,JSONPath=".status.endpoints.keystone",priority=1
type XOpenStackCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   OpenStackClusterParameters `json:"spec"`
	Status OpenStackClusterStatus     `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// XOpenStackClusterList is a list of XOpenStackCluster.
type XOpenStackClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []XOpenStackCluster `json:"items"`
}

// ShareOf returns the nodes the cloud's spec reserves of a hypervisor pool,
// or nil when it reserves none explicitly.
func (p *OpenStackClusterParameters) ShareOf(pool PoolName) *int32 {
	for i := range p.HypervisorShares {
		if p.HypervisorShares[i].Name == pool {
			return &p.HypervisorShares[i].Nodes
		}
	}
	return nil
}
