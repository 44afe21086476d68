package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CompressionMode of a pool (Ceph's compression_mode).
// +kubebuilder:validation:Enum=none;passive;aggressive;force
type CompressionMode string

// Application of a pool (ceph osd pool application enable).
// +kubebuilder:validation:Enum=rbd;cephfs;rgw
type Application string

// PoolParameters are the desired properties of a Pool.
// +kubebuilder:validation:XValidation:rule="!(has(self.deviceClass) && has(self.crushRule))",message="spec.forProvider sets either deviceClass or crushRule"
// +kubebuilder:validation:XValidation:rule="!(has(self.stretch) && has(self.crushRule))",message="spec.forProvider sets either stretch or crushRule: stretch makes its own rule"
// +kubebuilder:validation:XValidation:rule="!has(self.stretch) || (has(self.size) && self.size == 4)",message="spec.forProvider.stretch keeps 2 replicas in each of 2 zones: spec.forProvider.size must be 4"
// +kubebuilder:validation:XValidation:rule="!has(self.minSize) || !has(self.size) || self.minSize <= self.size",message="spec.forProvider.minSize must not exceed spec.forProvider.size"
type PoolParameters struct {
	// Name of the pool in Ceph. A pool of that name that this resource did
	// not create is refused, not adopted.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_.-]+$`
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.forProvider.name is immutable"
	Name string `json:"name"`

	// Size is the replica count. 1 keeps a single copy (no redundancy; the
	// provider gives Ceph the confirmation it asks for).
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10
	// +optional
	Size int32 `json:"size,omitempty"`

	// MinSize is the least number of replicas the pool serves I/O with
	// (Ceph's min_size); unset, Ceph's own (size - size/2).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10
	// +optional
	MinSize *int32 `json:"minSize,omitempty"`

	// CompressionMode of the pool.
	// +kubebuilder:default=none
	// +optional
	CompressionMode CompressionMode `json:"compressionMode,omitempty"`

	// QuotaMaxBytes caps the pool's data; 0 is unlimited.
	// +kubebuilder:validation:Minimum=0
	// +optional
	QuotaMaxBytes *int64 `json:"quotaMaxBytes,omitempty"`

	// QuotaMaxObjects caps the pool's objects; 0 is unlimited.
	// +kubebuilder:validation:Minimum=0
	// +optional
	QuotaMaxObjects *int64 `json:"quotaMaxObjects,omitempty"`

	// Application enabled on the pool.
	// +kubebuilder:default=rbd
	// +optional
	Application Application `json:"application,omitempty"`

	// DeviceClass places the pool on OSDs of one device class (a CRUSH rule
	// replicated_<class> is made for it); CrushRule names a rule instead.
	// +optional
	DeviceClass string `json:"deviceClass,omitempty"`

	// CrushRule of the pool.
	// +optional
	CrushRule string `json:"crushRule,omitempty"`

	// Stretch keeps the pool's replicas in two zones, two in each on other
	// hosts, as Ceph's stretch mode places them: losing a whole zone leaves
	// two copies. The provider makes the CRUSH rule stretch_<zoneType>
	// and the pool takes it; size must be 4, and minSize 2 keeps I/O going
	// with one zone lost. The rule takes every OSD under the root, never a
	// device class (Ceph's stretch mode cannot serve a pool whose rule
	// takes one once a zone is lost): deviceClass, when set, is checked
	// instead, and the pool is not made while an OSD under the root has
	// another class.
	// +optional
	Stretch *Stretch `json:"stretch,omitempty"`

	// DataPolicy is what becomes of the pool's data when this resource is
	// deleted. Retain (the default) keeps a pool that holds objects (RBD
	// images, in the trash or not, with their snapshots, or anything else)
	// in Ceph, detached from the resource: the resource goes, the pool and
	// its data stay. Delete deletes the pool with its data. A pool that
	// holds nothing is deleted either way.
	// +kubebuilder:default=Retain
	// +optional
	DataPolicy DataPolicy `json:"dataPolicy,omitempty"`
}

// Stretch is where a stretched pool's zones are in the CRUSH map.
type Stretch struct {
	// Root is the CRUSH root the two zones hang from.
	// +kubebuilder:default=default
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_.-]+$`
	// +optional
	Root string `json:"root,omitempty"`
	// ZoneType is the CRUSH bucket type of the zones (Rook makes
	// topology.kubernetes.io/zone buckets of type zone).
	// +kubebuilder:default=zone
	// +kubebuilder:validation:Enum=zone;datacenter;room;row;rack
	// +optional
	ZoneType string `json:"zoneType,omitempty"`
}

// DataPolicy says whether deleting a resource may delete the data it holds.
// +kubebuilder:validation:Enum=Retain;Delete
type DataPolicy string

// Data policies.
const (
	DataPolicyRetain DataPolicy = "Retain"
	DataPolicyDelete DataPolicy = "Delete"
)

// PoolObservation is the observed state of a Pool.
type PoolObservation struct {
	// PoolID in the cluster.
	// +optional
	PoolID int64 `json:"poolID,omitempty"`
	// CrushRule the pool's data is placed by, by name.
	// +optional
	CrushRule string `json:"crushRule,omitempty"`
	// Size and MinSize of the pool: how many replicas it keeps and how
	// few it serves I/O with.
	// +optional
	Size int32 `json:"size,omitempty"`
	// +optional
	MinSize int32 `json:"minSize,omitempty"`
	// StretchMode says, in a cluster in Ceph's stretch mode, whether it
	// governs the pool: Governed (its PGs go active only with copies in
	// both zones, and with min_size 1 once a zone is lost), or Outside: a
	// plain pool of its size and min_size, which Ceph 16.2.15 can make of a
	// pool created while stretch mode was being enabled (it still serves
	// with a zone lost, but not also with a host of the other zone lost;
	// docs/operations.md says what to do). Absent while the cluster is not
	// in stretch mode.
	// +kubebuilder:validation:Enum=Governed;Outside
	// +optional
	StretchMode string `json:"stretchMode,omitempty"`
	// UsedBytes stored in the pool (ceph df: stored).
	// +optional
	UsedBytes int64 `json:"usedBytes,omitempty"`
	// AvailableBytes the pool can still take (ceph df: max_avail).
	// +optional
	AvailableBytes int64 `json:"availableBytes,omitempty"`
	// Objects in the pool (ceph df, some seconds late).
	// +optional
	Objects int64 `json:"objects,omitempty"`
	// DataObjects is what the pool holds, listed: its objects but RBD's
	// pool-wide bookkeeping (at most 1000 are counted). A pool whose
	// dataObjects is not 0 holds data that spec.forProvider.dataPolicy
	// keeps.
	// +optional
	DataObjects int64 `json:"dataObjects,omitempty"`
	// Images among them: RBD images, in the trash or not.
	// +optional
	Images int64 `json:"images,omitempty"`
}

// PoolSpec is the desired state of a Pool.
type PoolSpec struct {
	xpv2.ClusterManagedResourceSpec `json:",inline"`
	ForProvider                     PoolParameters `json:"forProvider"`
}

// PoolStatus is the observed state of a Pool.
type PoolStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	AtProvider                 PoolObservation `json:"atProvider,omitempty"`
}

// Pool is a Ceph pool (RBD by default) with replication, compression and
// quotas, and its usage in status.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories={crossplane,managed,ceph}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="SYNCED",type=string,JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="POOL",type=string,JSONPath=".spec.forProvider.name"
// +kubebuilder:printcolumn:name="SIZE",type=integer,JSONPath=".spec.forProvider.size"
// +kubebuilder:printcolumn:name="RULE",type=string,JSONPath=".status.atProvider.crushRule",priority=1
// +kubebuilder:printcolumn:name="STRETCH-MODE",type=string,JSONPath=".status.atProvider.stretchMode",priority=1
// +kubebuilder:printcolumn:name="USED",type=integer,JSONPath=".status.atProvider.usedBytes",priority=1
// +kubebuilder:printcolumn:name="EXTERNAL-NAME",type=string,JSONPath=".metadata.annotations.crossplane\\.io/external-name"
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=".metadata.creationTimestamp"
type Pool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   PoolSpec   `json:"spec"`
	Status PoolStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// PoolList is a list of Pool.
type PoolList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Pool `json:"items"`
}
