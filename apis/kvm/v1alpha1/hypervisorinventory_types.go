package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// HypervisorInventoryParameters select the Hypervisors of a pool.
type HypervisorInventoryParameters struct {
	// HypervisorSelector are labels a Hypervisor must carry to be counted.
	// Empty: every Hypervisor of the cluster, which is what a pool cluster
	// (one hypervisor pool per Shoot) holds.
	// +kubebuilder:validation:MaxProperties=16
	// +optional
	HypervisorSelector map[string]string `json:"hypervisorSelector,omitempty"`
}

// Resources are compute resources: vCPUs and memory.
type Resources struct {
	// VCPUs, in cores.
	VCPUs int64 `json:"vcpus"`
	// MemoryGiB in GiB, rounded down.
	MemoryGiB int64 `json:"memoryGiB"`
}

// HypervisorNotInService names a Hypervisor that does not count as in
// service, and why.
type HypervisorNotInService struct {
	// Name of the Hypervisor (its node's name).
	Name string `json:"name"`
	// Reason: Maintenance, Evicted, LibvirtDisconnected, NotReporting or
	// NotReady.
	Reason string `json:"reason"`
	// Message from the condition that says so, if any.
	// +optional
	Message string `json:"message,omitempty"`
}

// HypervisorNode is one node of the pool as its Hypervisor says it: what a
// pool needs to give nodes to clouds by name (docs/allocation.md).
type HypervisorNode struct {
	// Name of the Hypervisor: its node's name, and Nova's compute host.
	Name string `json:"name"`
	// Zone of the node (its Hypervisor's topology.kubernetes.io/zone
	// label, which the hypervisor operator copies from the node).
	// +optional
	Zone string `json:"zone,omitempty"`
	// InService is true when the Hypervisor counts as in service.
	InService bool `json:"inService"`
	// Instances are the domains on the node.
	// +optional
	Instances int32 `json:"instances,omitempty"`
}

// LabelZone is the label that places a node, and its Hypervisor, in a
// zone.
const LabelZone = "topology.kubernetes.io/zone"

// HypervisorInventoryObservation counts a pool's Hypervisors by whether they
// are in service, and sums what those in service offer. Every Hypervisor
// counts in exactly one of inService, maintenance, disconnected and
// notReady.
type HypervisorInventoryObservation struct {
	// Hypervisors selected.
	Hypervisors int32 `json:"hypervisors"`
	// InService: Hypervisors whose agent is connected to libvirt and
	// reports capacity, that are neither in maintenance nor evicted, and
	// that the hypervisor operator (where it reports readiness) calls
	// Ready.
	InService int32 `json:"inService"`
	// Maintenance: Hypervisors in maintenance (spec.maintenance) or
	// evicted.
	Maintenance int32 `json:"maintenance"`
	// Disconnected: Hypervisors whose agent lost libvirt or has not
	// reported yet.
	Disconnected int32 `json:"disconnected"`
	// NotReady: Hypervisors the hypervisor operator does not call Ready
	// (onboarding, tests running).
	NotReady int32 `json:"notReady"`
	// Instances are the domains on the Hypervisors in service.
	Instances int32 `json:"instances"`

	// Capacity of the Hypervisors in service: their hosts' CPUs and memory.
	Capacity Resources `json:"capacity"`
	// EffectiveCapacity of the Hypervisors in service: capacity with each
	// Hypervisor's overcommit applied.
	EffectiveCapacity Resources `json:"effectiveCapacity"`
	// Allocation: what the domains on the Hypervisors in service hold.
	Allocation Resources `json:"allocation"`
	// Available: effective capacity less allocation, summed over the
	// Hypervisors in service (an overbooked one adds nothing).
	Available Resources `json:"available"`

	// Nodes are every selected Hypervisor, by name.
	// +kubebuilder:validation:MaxItems=5000
	// +optional
	Nodes []HypervisorNode `json:"nodes,omitempty"`
	// NotInService name the first Hypervisors that are not in service.
	// +kubebuilder:validation:MaxItems=10
	// +optional
	NotInService []HypervisorNotInService `json:"notInService,omitempty"`
}

// HypervisorInventorySpec is the desired state of a HypervisorInventory.
type HypervisorInventorySpec struct {
	xpv2.ClusterManagedResourceSpec `json:",inline"`
	// +optional
	ForProvider HypervisorInventoryParameters `json:"forProvider,omitempty"`
}

// HypervisorInventoryStatus is the observed state of a HypervisorInventory.
type HypervisorInventoryStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	AtProvider                 HypervisorInventoryObservation `json:"atProvider,omitempty"`
}

// A HypervisorInventory observes the Hypervisors (kvm.cloud.sap/v1) of a
// pool cluster — one per node, created by the hypervisor operator and kept
// up to date by the pool's hypervisor agents from libvirt — and reports how
// many are in service and what they offer and hold. It only reads: it never
// changes a Hypervisor, and deleting it leaves the cluster as it was. The
// provider watches the Hypervisors, so a node that loses libvirt or enters
// maintenance shows up within seconds.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories={crossplane,managed,cobaltcore}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="SYNCED",type=string,JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="HYPERVISORS",type=integer,JSONPath=".status.atProvider.hypervisors"
// +kubebuilder:printcolumn:name="IN-SERVICE",type=integer,JSONPath=".status.atProvider.inService"
// +kubebuilder:printcolumn:name="VCPUS-FREE",type=integer,JSONPath=".status.atProvider.available.vcpus"
// +kubebuilder:printcolumn:name="MEMORY-GIB-FREE",type=integer,JSONPath=".status.atProvider.available.memoryGiB"
// +kubebuilder:printcolumn:name="INSTANCES",type=integer,JSONPath=".status.atProvider.instances",priority=1
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=".metadata.creationTimestamp"
type HypervisorInventory struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   HypervisorInventorySpec   `json:"spec"`
	Status HypervisorInventoryStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// HypervisorInventoryList is a list of HypervisorInventory.
type HypervisorInventoryList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []HypervisorInventory `json:"items"`
}
