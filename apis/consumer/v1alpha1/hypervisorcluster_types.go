package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// HypervisorClusterParameters are the desired properties of a hypervisor pool.
// +kubebuilder:validation:XValidation:rule="self.workers <= self.maxWorkers",message="spec.workers must not exceed spec.maxWorkers"
// +kubebuilder:validation:XValidation:rule="!self.dedicated || (has(self.allowedTenants) && size(self.allowedTenants) > 0)",message="spec.allowedTenants must name the tenant namespace(s) a dedicated pool is for"
type HypervisorClusterParameters struct {
	PoolPlacement `json:",inline"`
	PoolAccess    `json:",inline"`

	// Workers is the minimum node count of the pool.
	// +kubebuilder:default=20
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +optional
	Workers int32 `json:"workers,omitempty"`

	// MaxWorkers is the node count the pool may autoscale up to.
	// +kubebuilder:default=100
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +optional
	MaxWorkers int32 `json:"maxWorkers,omitempty"`

	// IronCore selects the bare-metal servers of the pool.
	IronCore HypervisorMachines `json:"ironcore"`
}

// HypervisorMachines are the bare-metal servers of a hypervisor pool.
type HypervisorMachines struct {
	// MachinePool is the machine-pool label value of the pool's servers.
	MachinePool MachinePoolLabel `json:"machinePool"`
	// MachineClass of the pool's servers.
	// +kubebuilder:default=baremetal-kvm
	// +optional
	MachineClass MachineClass `json:"machineClass,omitempty"`
}

// HypervisorPoolPhase is the lifecycle phase of a hypervisor pool. Scaling:
// the pool is usable while Gardener applies a change to it (its size, its
// Kubernetes version, maintenance).
// +kubebuilder:validation:Enum=Provisioning;Ready;Scaling;Failed
type HypervisorPoolPhase string

// Hypervisor pool phases.
const (
	HypervisorPoolPhaseProvisioning HypervisorPoolPhase = "Provisioning"
	HypervisorPoolPhaseReady        HypervisorPoolPhase = "Ready"
	HypervisorPoolPhaseScaling      HypervisorPoolPhase = "Scaling"
	HypervisorPoolPhaseFailed       HypervisorPoolPhase = "Failed"
)

// Capacity is what a hypervisor pool can offer to the clouds that consume it.
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
	Phase HypervisorPoolPhase `json:"phase,omitempty"`
	// ClusterName is Gardener's technical ID of the pool's Shoot.
	// +optional
	ClusterName string `json:"clusterName,omitempty"`
	// NodeCount is the number of ready nodes of the pool: its minimum while
	// only Gardener's view is observed (every node Ready); the pool's agents
	// report the exact count.
	// +optional
	NodeCount int32 `json:"nodeCount,omitempty"`
	// AvailableCapacity of the pool: its node count times the CPUs and memory
	// of its machine class in the Gardener CloudProfile.
	// +optional
	AvailableCapacity *Capacity `json:"availableCapacity,omitempty"`
	// Inventory of the pool's bare-metal servers.
	// +optional
	Inventory *PoolInventory `json:"inventory,omitempty"`
}

// XHypervisorCluster is a pool of KVM hypervisors on IronCore bare metal,
// run as a Gardener Shoot. Platform engineers claim it as a
// HypervisorCluster; OpenStack clouds then consume it by name.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories={crossplane,cobaltcore}
// +kubebuilder:printcolumn:name="REGION",type=string,JSONPath=".spec.region"
// +kubebuilder:printcolumn:name="POOL",type=string,JSONPath=".spec.name"
// +kubebuilder:printcolumn:name="DEDICATED",type=boolean,JSONPath=".spec.dedicated"
// +kubebuilder:printcolumn:name="WORKERS",type=integer,JSONPath=".spec.workers"
// +kubebuilder:printcolumn:name="NODES",type=integer,JSONPath=".status.nodeCount"
// +kubebuilder:printcolumn:name="SERVERS",type=integer,JSONPath=".status.inventory.usable"
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
