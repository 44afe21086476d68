package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ServerInventoryParameters select the metal-operator Servers of a machine
// pool.
type ServerInventoryParameters struct {
	// ServerSelector are the labels a Server must carry to belong to the
	// machine pool: the same labels the pool's Shoot worker puts into the
	// serverSelector of its ServerClaims (WorkerConfig.extraServerLabels).
	// +kubebuilder:validation:MinProperties=1
	// +kubebuilder:validation:MaxProperties=16
	ServerSelector map[string]string `json:"serverSelector"`

	// ClaimNamePrefix marks the pool's own ServerClaims: a Server claimed by
	// a ServerClaim whose name begins with it is the pool's, any other
	// claimed Server is counted as claimed by another pool. Gardener's
	// ironcore-metal machine controller names a worker's ServerClaims after
	// its Machines, which begin with the Shoot's technical ID. Empty: every
	// claimed Server is another pool's (a pool without a Shoot claims none).
	// +kubebuilder:validation:MaxLength=253
	// +optional
	ClaimNamePrefix string `json:"claimNamePrefix,omitempty"`
}

// ServerCapacity is what a set of servers offers.
type ServerCapacity struct {
	// CPUs are the hardware threads of the servers' processors (cores
	// where a processor reports no threads).
	CPUs int64 `json:"cpus"`
	// MemoryGiB is the servers' total system memory in GiB, rounded down.
	MemoryGiB int64 `json:"memoryGiB"`
	// DiskGiB is the capacity of the servers' drives (the metal-operator's
	// status.storages[].drives[]) in GiB, rounded down: what a storage
	// pool's Ceph OSDs can use.
	// +optional
	DiskGiB int64 `json:"diskGiB,omitempty"`
}

// ClaimedServer is a Server of the pool's labels that something else claimed.
type ClaimedServer struct {
	// Server is the Server's name.
	Server string `json:"server"`
	// Claim is the ServerClaim holding it, as namespace/name.
	Claim string `json:"claim"`
}

// ServerInventoryObservation counts a machine pool's Servers by what they
// can be used for. Every Server counts in exactly one of available,
// claimed, claimedByOthers, released, discovering, maintenance and failed.
type ServerInventoryObservation struct {
	// Servers carrying the pool's labels.
	Servers int32 `json:"servers"`
	// Available Servers, ready to be claimed.
	Available int32 `json:"available"`
	// Claimed Servers, by the pool's own ServerClaims.
	Claimed int32 `json:"claimed"`
	// ClaimedByOthers: Servers held by a ServerClaim that is not the pool's.
	ClaimedByOthers int32 `json:"claimedByOthers"`
	// Released Servers, waiting for their old claim to let go.
	Released int32 `json:"released"`
	// Discovering: Servers the metal-operator is still discovering
	// (Initial, Discovery).
	Discovering int32 `json:"discovering"`
	// Maintenance: Servers in maintenance or parked for day-2 operations.
	Maintenance int32 `json:"maintenance"`
	// Failed: Servers in the Error state.
	Failed int32 `json:"failed"`
	// Usable Servers are those the pool could ever hold: every Server of
	// its labels that is neither another pool's nor failed.
	Usable int32 `json:"usable"`

	// UsableCapacity is what the usable Servers offer together.
	UsableCapacity ServerCapacity `json:"usableCapacity"`
	// SmallestDiskGiB is the least capacity of one usable Server's drives,
	// in GiB: a storage pool sized from it gets enough nodes whichever
	// usable Servers Gardener claims for it. 0 while a usable Server reports
	// no drives (the metal-operator has not discovered them yet).
	// +optional
	SmallestDiskGiB int64 `json:"smallestDiskGiB,omitempty"`
	// AvailableCapacity is what the Available Servers offer together.
	AvailableCapacity ServerCapacity `json:"availableCapacity"`

	// ClaimedByOthersServers name the first Servers another pool holds.
	// +kubebuilder:validation:MaxItems=10
	// +optional
	ClaimedByOthersServers []ClaimedServer `json:"claimedByOthersServers,omitempty"`
	// FailedServers name the first Servers in the Error state.
	// +kubebuilder:validation:MaxItems=10
	// +optional
	FailedServers []string `json:"failedServers,omitempty"`
}

// ServerInventorySpec is the desired state of a ServerInventory.
type ServerInventorySpec struct {
	xpv2.ClusterManagedResourceSpec `json:",inline"`
	ForProvider                     ServerInventoryParameters `json:"forProvider"`
}

// ServerInventoryStatus is the observed state of a ServerInventory.
type ServerInventoryStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	AtProvider                 ServerInventoryObservation `json:"atProvider,omitempty"`
}

// A ServerInventory observes the metal-operator Servers of an IronCore
// machine pool — the Servers carrying spec.forProvider.serverSelector — and
// reports how many there are in each state and what they offer. It only
// reads: it never claims, powers or labels a Server, and deleting it leaves
// the metal cluster as it was. The provider watches the Servers, so a
// Server that fails or returns shows up within seconds.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories={crossplane,managed,cobaltcore}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="SYNCED",type=string,JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="SERVERS",type=integer,JSONPath=".status.atProvider.servers"
// +kubebuilder:printcolumn:name="AVAILABLE",type=integer,JSONPath=".status.atProvider.available"
// +kubebuilder:printcolumn:name="USABLE",type=integer,JSONPath=".status.atProvider.usable"
// +kubebuilder:printcolumn:name="FAILED",type=integer,JSONPath=".status.atProvider.failed"
// +kubebuilder:printcolumn:name="CPUS",type=integer,JSONPath=".status.atProvider.usableCapacity.cpus",priority=1
// +kubebuilder:printcolumn:name="MEMORY-GIB",type=integer,JSONPath=".status.atProvider.usableCapacity.memoryGiB",priority=1
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=".metadata.creationTimestamp"
type ServerInventory struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ServerInventorySpec   `json:"spec"`
	Status ServerInventoryStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ServerInventoryList is a list of ServerInventory.
type ServerInventoryList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ServerInventory `json:"items"`
}
