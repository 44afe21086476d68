package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ControlPlaneClusterParameters are the desired properties of the cluster that
// hosts a region's OpenStack control planes.
// +kubebuilder:validation:XValidation:rule="self.workers <= self.maxWorkers",message="spec.workers must not exceed spec.maxWorkers"
// +kubebuilder:validation:XValidation:rule="!self.highAvailability || !has(self.zones) || size(self.zones) >= 3",message="spec.zones must name at least 3 zones when spec.highAvailability is true: Gardener spreads the control plane over zones"
type ControlPlaneClusterParameters struct {
	// Region is the Gardener region the cluster runs in.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.region is immutable"
	Region Region `json:"region"`

	// KubernetesVersion of the cluster's Shoot.
	// +kubebuilder:default="1.34"
	// +optional
	KubernetesVersion KubernetesVersion `json:"kubernetesVersion,omitempty"`

	// Workers is the minimum node count of the cluster.
	// +kubebuilder:default=5
	// +kubebuilder:validation:Minimum=3
	// +kubebuilder:validation:Maximum=100
	// +optional
	Workers int32 `json:"workers,omitempty"`

	// MaxWorkers is the node count the cluster may autoscale up to.
	// +kubebuilder:default=10
	// +kubebuilder:validation:Minimum=3
	// +kubebuilder:validation:Maximum=100
	// +optional
	MaxWorkers int32 `json:"maxWorkers,omitempty"`

	// MachineType of the workers: a machine type of the Gardener CloudProfile.
	// One it does not offer makes no Shoot; the claim's ShootReady says so
	// and names those it offers.
	// +kubebuilder:default=baremetal-control-plane
	// +optional
	MachineType MachineClass `json:"machineType,omitempty"`

	// MachinePool optionally restricts the workers to the bare-metal servers
	// of an IronCore machine pool.
	// +optional
	MachinePool MachinePoolLabel `json:"machinePool,omitempty"`

	// VolumeSize of each worker's root volume.
	// +kubebuilder:default="200Gi"
	// +optional
	VolumeSize Quantity `json:"volumeSize,omitempty"`

	// HighAvailability spreads the cluster's control plane over zones
	// (Gardener failure tolerance "zone").
	// +kubebuilder:default=true
	// +optional
	HighAvailability bool `json:"highAvailability"`

	// Zones of the region the workers are spread over. When omitted, the
	// cluster takes every zone of its region in the landscape's Gardener
	// CloudProfile when it is created, and keeps them (status.zones).
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=5
	// +kubebuilder:validation:items:MaxLength=63
	// +listType=set
	// +optional
	Zones []string `json:"zones,omitempty"`
}

// ControlPlaneClusterStatus is the observed state of a control-plane cluster.
type ControlPlaneClusterStatus struct {
	// Phase of the cluster.
	// +optional
	Phase ShootPhase `json:"phase,omitempty"`
	// ClusterName is Gardener's technical ID of the cluster's Shoot.
	// +optional
	ClusterName string `json:"clusterName,omitempty"`
	// ShootName is the name of the cluster's Gardener Shoot in the landscape's
	// project. It is the cluster's name when that fits Gardener's limit (project
	// and Shoot name at most 21 characters together); a longer name is cut
	// and ends in a hash of the whole name. It never changes once the Shoot
	// exists.
	// +optional
	ShootName string `json:"shootName,omitempty"`
	// ShootRefusal is set while Gardener refuses the Shoot asked for.
	// +optional
	ShootRefusal *ShootRefusal `json:"shootRefusal,omitempty"`
	// Zones the cluster's nodes are spread over: spec.zones, or the zones of
	// its region in the Gardener CloudProfile when it was created.
	// +optional
	Zones []string `json:"zones,omitempty"`
	// Kubeconfig is the Secret that holds a fresh admin kubeconfig of the
	// cluster.
	// +optional
	Kubeconfig *SecretReference `json:"kubeconfig,omitempty"`
}

// XControlPlaneCluster is the highly available cluster that hosts a region's
// OpenStack control planes, run as a Gardener Shoot. Platform engineers claim
// it as a ControlPlaneCluster.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories={crossplane,cobaltcore}
// +kubebuilder:printcolumn:name="REGION",type=string,JSONPath=".spec.region"
// +kubebuilder:printcolumn:name="SHOOT",type=string,JSONPath=".status.shootName"
// +kubebuilder:printcolumn:name="VERSION",type=string,JSONPath=".spec.kubernetesVersion"
// +kubebuilder:printcolumn:name="WORKERS",type=integer,JSONPath=".spec.workers"
// +kubebuilder:printcolumn:name="HA",type=boolean,JSONPath=".spec.highAvailability"
// +kubebuilder:printcolumn:name="PHASE",type=string,JSONPath=".status.phase"
type XControlPlaneCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ControlPlaneClusterParameters `json:"spec"`
	Status ControlPlaneClusterStatus     `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// XControlPlaneClusterList is a list of XControlPlaneCluster.
type XControlPlaneClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []XControlPlaneCluster `json:"items"`
}
