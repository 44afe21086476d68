package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// IronCoreMachinePool selects the bare-metal servers a pool's nodes run on.
// IronCore has no machine-pool object: a pool is the label set that the
// pool's Shoot worker asks metal-operator ServerClaims to match.
type IronCoreMachinePool struct {
	// MachinePool is the value of the c5c3.io/machine-pool server label that
	// marks the bare-metal servers of this pool. It is carried into the Shoot
	// worker's WorkerConfig.extraServerLabels, so every ServerClaim of the
	// pool selects only servers carrying it.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9._]*[a-z0-9])?$`
	MachinePool string `json:"machinePool"`

	// MachineClass is the machine type of the Gardener CloudProfile the
	// workers use (it maps to the CloudProfile's server labels).
	// +kubebuilder:default=baremetal-kvm
	// +kubebuilder:validation:MinLength=1
	// +optional
	MachineClass string `json:"machineClass,omitempty"`
}

// HypervisorClusterParameters are the desired properties of a hypervisor pool.
// +kubebuilder:validation:XValidation:rule="self.workers <= self.maxWorkers",message="spec.workers must not exceed spec.maxWorkers"
type HypervisorClusterParameters struct {
	// Region is the Gardener region the pool runs in. OpenStack clouds consume
	// only pools of their own region.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.region is immutable"
	Region string `json:"region"`

	// Name is the pool's name, which tenants use to refer to it and which
	// names its Shoot. Gardener limits Shoot names to 21 characters.
	// +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]{0,19}[a-z0-9])?$`
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.name is immutable"
	Name string `json:"name"`

	// KubernetesVersion of the pool's Shoot (major.minor or major.minor.patch);
	// it must be offered by the Gardener CloudProfile.
	// +kubebuilder:default="1.34"
	// +kubebuilder:validation:Pattern=`^1\.[0-9]+(\.[0-9]+)?$`
	// +optional
	KubernetesVersion string `json:"kubernetesVersion,omitempty"`

	// Workers is the minimum node count of the pool.
	// +kubebuilder:default=20
	// +kubebuilder:validation:Minimum=1
	// +optional
	Workers int32 `json:"workers,omitempty"`

	// MaxWorkers is the node count the pool may autoscale up to.
	// +kubebuilder:default=100
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +optional
	MaxWorkers int32 `json:"maxWorkers,omitempty"`

	// IronCore selects the bare-metal servers of the pool.
	IronCore IronCoreMachinePool `json:"ironcore"`

	// Zones are the availability zones of the region the pool's workers are
	// spread over.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=5
	// +listType=set
	Zones []string `json:"zones"`

	// Labels are scheduling labels of the pool (for example hardware-gen or
	// tier); they are set on the Shoot and on every node of the pool.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
}

// PoolPhase is the lifecycle phase of a pool.
// +kubebuilder:validation:Enum=Provisioning;Ready;Scaling;Failed
type PoolPhase string

// Pool phases.
const (
	PoolPhaseProvisioning PoolPhase = "Provisioning"
	PoolPhaseReady        PoolPhase = "Ready"
	PoolPhaseScaling      PoolPhase = "Scaling"
	PoolPhaseFailed       PoolPhase = "Failed"
)

// Capacity is what a pool can offer to the clouds that consume it.
type Capacity struct {
	// VCPUs available in the pool.
	// +optional
	VCPUs int64 `json:"vcpus,omitempty"`
	// MemoryGB available in the pool.
	// +optional
	MemoryGB int64 `json:"memoryGB,omitempty"`
}

// HypervisorClusterStatus is the observed state of a hypervisor pool.
type HypervisorClusterStatus struct {
	// Phase of the pool.
	// +optional
	Phase PoolPhase `json:"phase,omitempty"`
	// ClusterName is Gardener's technical ID of the pool's Shoot.
	// +optional
	ClusterName string `json:"clusterName,omitempty"`
	// NodeCount is the number of ready nodes of the pool.
	// +optional
	NodeCount int32 `json:"nodeCount,omitempty"`
	// AvailableCapacity of the pool.
	// +optional
	AvailableCapacity *Capacity `json:"availableCapacity,omitempty"`
}

// XHypervisorCluster is a pool of KVM hypervisors on IronCore bare metal,
// run as a Gardener Shoot. Platform engineers claim it as a
// HypervisorCluster; OpenStack clouds then consume it by name.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories={crossplane,composite,cobaltcore}
// +kubebuilder:printcolumn:name="REGION",type=string,JSONPath=".spec.region"
// +kubebuilder:printcolumn:name="POOL",type=string,JSONPath=".spec.name"
// +kubebuilder:printcolumn:name="WORKERS",type=integer,JSONPath=".spec.workers"
// +kubebuilder:printcolumn:name="NODES",type=integer,JSONPath=".status.nodeCount"
// +kubebuilder:printcolumn:name="PHASE",type=string,JSONPath=".status.phase"
type XHypervisorCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   HypervisorClusterParameters `json:"spec"`
	Status HypervisorClusterStatus     `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// XHypervisorClusterList is a list of XHypervisorCluster.
type XHypervisorClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []XHypervisorCluster `json:"items"`
}
