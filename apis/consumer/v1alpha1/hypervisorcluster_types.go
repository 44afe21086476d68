package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// HypervisorClusterParameters are the desired properties of a hypervisor pool.
// +kubebuilder:validation:XValidation:rule="self.workers <= self.maxWorkers",message="spec.workers must not exceed spec.maxWorkers"
// +kubebuilder:validation:XValidation:rule="!self.dedicated || (has(self.allowedTenants) && size(self.allowedTenants) > 0)",message="spec.allowedTenants must name the tenant namespace(s) a dedicated pool is for"
// +kubebuilder:validation:XValidation:rule="!has(self.labels) || !('dedicated' in self.labels) || self.labels['dedicated'] in ['true', 'false']",message="spec.labels.dedicated marks a dedicated pool, as spec.dedicated does: it must be \"true\" or \"false\""
// +kubebuilder:validation:XValidation:rule="!self.dedicated || !has(self.labels) || !('dedicated' in self.labels) || self.labels['dedicated'] == 'true'",message="spec.labels.dedicated is \"false\" and spec.dedicated is true: a pool is dedicated or shared, drop one of them"
// +kubebuilder:validation:XValidation:rule="(has(oldSelf.labels) && 'dedicated' in oldSelf.labels && oldSelf.labels['dedicated'] == 'true') == (has(self.labels) && 'dedicated' in self.labels && self.labels['dedicated'] == 'true')",message="spec.labels.dedicated is immutable, as spec.dedicated is: create a new pool instead"
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

	// IronCore selects the bare-metal servers of the pool; when omitted,
	// those of its machine class labelled with the pool's name.
	// +kubebuilder:default={}
	// +optional
	IronCore HypervisorMachines `json:"ironcore"`
}

// HypervisorMachines are the bare-metal servers of a hypervisor pool.
type HypervisorMachines struct {
	// MachinePool is the machine-pool label value of the pool's servers
	// (c5c3.io/machine-pool). When omitted, the pool's name.
	// +optional
	MachinePool MachinePoolLabel `json:"machinePool,omitempty"`
	// MachineClass of the pool's servers: a machine type of the landscape's
	// CloudProfile. One it does not offer makes no Shoot; the claim's
	// ShootReady says so and names those it offers.
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
	// VCPUs available in the pool. (Zero is written, not left out: an
	// empty object is not a valid status, and "none free" is news.)
	// +optional
	VCPUs int64 `json:"vcpus"`
	// MemoryGB available in the pool.
	// +optional
	MemoryGB int64 `json:"memoryGB"`
}

// CapacitySource is where a pool's node count and capacity come from.
// +kubebuilder:validation:Enum=Agents;CloudProfile
type CapacitySource string

// Sources of a pool's node count and capacity.
const (
	CapacitySourceAgents       CapacitySource = "Agents"
	CapacitySourceCloudProfile CapacitySource = "CloudProfile"
)

// PoolHypervisors are a pool's Hypervisors (kvm.cloud.sap/v1), one per node,
// as the pool's hypervisor agents publish them from libvirt.
type PoolHypervisors struct {
	// Total Hypervisors of the pool.
	Total int32 `json:"total"`
	// InService: connected to libvirt, reporting, neither in maintenance
	// nor evicted, and Ready where the hypervisor operator says so.
	InService int32 `json:"inService"`
	// Maintenance: in maintenance or evicted.
	Maintenance int32 `json:"maintenance"`
	// Disconnected: the agent lost libvirt or has not reported.
	Disconnected int32 `json:"disconnected"`
	// NotReady: onboarding or under test by the hypervisor operator.
	NotReady int32 `json:"notReady"`
	// Instances on the Hypervisors in service.
	Instances int32 `json:"instances"`
	// Capacity of the Hypervisors in service, overcommit applied.
	Capacity Capacity `json:"capacity"`
	// Allocated: what their instances hold.
	Allocated Capacity `json:"allocated"`
}

// HypervisorClusterStatus is the observed state of a hypervisor pool.
type HypervisorClusterStatus struct {
	// Phase of the pool.
	// +optional
	Phase HypervisorPoolPhase `json:"phase,omitempty"`
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
	// NodeCount is the number of the pool's nodes in service: the
	// Hypervisors its agents report in service, or, until they report any,
	// its minimum (spec.workers) once Gardener reports every node Ready.
	// +optional
	NodeCount int32 `json:"nodeCount,omitempty"`
	// AvailableCapacity of the pool: what the Hypervisors in service can
	// still hold (their effective capacity less what their instances
	// hold), or, until the agents report, the node count times the CPUs and
	// memory of the machine class in the Gardener CloudProfile.
	// +optional
	AvailableCapacity *Capacity `json:"availableCapacity,omitempty"`
	// CapacitySource says where nodeCount and availableCapacity come from:
	// Agents (the Hypervisors the pool's agents publish) or CloudProfile.
	// +optional
	CapacitySource CapacitySource `json:"capacitySource,omitempty"`
	// Hypervisors of the pool, as its agents publish them.
	// +optional
	Hypervisors *PoolHypervisors `json:"hypervisors,omitempty"`
	// Inventory of the pool's bare-metal servers.
	// +optional
	Inventory *PoolInventory `json:"inventory,omitempty"`
	// Shares of the pool's nodes, one per cloud that consumes it, as the
	// pool decides them from the share records the clouds keep on their
	// ClusterUsages of it (docs/allocation.md). The pool alone decides:
	// what it allocated is never taken back, and a request that does not
	// fit keeps asked above allocated until nodes are free.
	// +optional
	Shares []PoolShare `json:"shares,omitempty"`
	// AllocatedNodes is the sum of the shares' allocated nodes.
	// +optional
	AllocatedNodes int32 `json:"allocatedNodes,omitempty"`
	// Unreachable says why the pool's agents cannot be read now (its
	// cluster cannot be reached): nodeCount, availableCapacity and
	// hypervisors are then their last report, each cloud keeps the nodes
	// it holds, and the clouds' ComputeAvailable is Unknown.
	// +optional
	Unreachable string `json:"unreachable,omitempty"`
}

// PoolShare is a cloud's share of a hypervisor pool.
type PoolShare struct {
	// Cloud is the consuming XOpenStackCluster's name.
	Cloud string `json:"cloud"`
	// Claim names the cloud as its tenant knows it (namespace/name).
	// +optional
	Claim string `json:"claim,omitempty"`
	// Asked is the nodes the cloud asks for.
	Asked int32 `json:"asked"`
	// Allocated is the nodes the pool gives it.
	Allocated int32 `json:"allocated"`
	// Nodes the cloud holds, by name: its compute agents' nodes and its
	// Nova aggregate's hosts. Named once the pool's agents report its
	// nodes; a node given stays with its cloud (docs/allocation.md).
	// +listType=set
	// +optional
	Nodes []string `json:"nodes,omitempty"`
	// Draining are nodes the cloud still holds beyond its share because
	// they run its instances: it gives them up once they are empty.
	// +listType=set
	// +optional
	Draining []string `json:"draining,omitempty"`
	// Instances of the cloud on its nodes and those draining, as the
	// pool's agents report them.
	// +optional
	Instances int32 `json:"instances,omitempty"`
	// OutOfService are the nodes the cloud holds that the pool's agents
	// report out of service (failed, disconnected, in maintenance, not
	// ready; the pool's AgentsReporting says which): they still run the
	// cloud's instances, so they stay its (in draining) until those are
	// gone, and a free node takes their place in the share. A node out of
	// service without instances leaves the share at once.
	// +listType=set
	// +optional
	OutOfService []string `json:"outOfService,omitempty"`
}

// XHypervisorCluster is a pool of KVM hypervisors on IronCore bare metal,
// run as a Gardener Shoot. Platform engineers claim it as a
// HypervisorCluster; OpenStack clouds then consume it by name.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories={crossplane,cobaltcore}
// +kubebuilder:printcolumn:name="REGION",type=string,JSONPath=".spec.region"
// +kubebuilder:printcolumn:name="POOL",type=string,JSONPath=".spec.name"
// +kubebuilder:printcolumn:name="SHOOT",type=string,JSONPath=".status.shootName"
// +kubebuilder:printcolumn:name="DEDICATED",type=boolean,JSONPath=".status.dedicated"
// +kubebuilder:printcolumn:name="WORKERS",type=integer,JSONPath=".spec.workers"
// +kubebuilder:printcolumn:name="NODES",type=integer,JSONPath=".status.nodeCount"
// +kubebuilder:printcolumn:name="ALLOCATED",type=integer,JSONPath=".status.allocatedNodes"
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

// Default fills what the schema leaves to code: spec.labels.dedicated:
// "true" makes the pool dedicated; an omitted spec.name is the claim's
// name, and an omitted machine pool the pool's name. Functions call it on
// every pool they read.
func (x *XHypervisorCluster) Default() {
	defaultPool(x, &x.Spec.PoolPlacement, &x.Spec.PoolAccess, &x.Spec.IronCore.MachinePool)
}
