package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Kind of the c5c3-operator's control plane.
const Kind = "ControlPlane"

// The ControlPlane's Ready condition (True with reason AllReady only when
// every step of its chain is), and the one that says Keystone serves.
const (
	ConditionReady         = "Ready"
	ConditionKeystoneReady = "KeystoneReady"
	ReasonAllReady         = "AllReady"
)

// Reference names an object in the ControlPlane's namespace.
type Reference struct {
	Name string `json:"name"`
}

// Database of the control plane (a MariaDB cluster of the operator).
type Database struct {
	ClusterRef Reference `json:"clusterRef"`
	Database   string    `json:"database"`
	SecretRef  Reference `json:"secretRef"`
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
	// +optional
	StorageSize string `json:"storageSize,omitempty"`
}

// Cache of the control plane (memcached).
type Cache struct {
	ClusterRef Reference `json:"clusterRef"`
	Backend    string    `json:"backend"`
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
}

// Infrastructure are the control plane's backing services.
type Infrastructure struct {
	Database Database `json:"database"`
	Cache    Cache    `json:"cache"`
}

// Gateway exposes a service through a Gateway API parent.
type Gateway struct {
	// +optional
	ParentRef *Reference `json:"parentRef,omitempty"`
	// +optional
	Hostname string `json:"hostname,omitempty"`
}

// Service is what every service of the real CRD has in common.
type Service struct {
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
	// +optional
	Gateway *Gateway `json:"gateway,omitempty"`
	// +optional
	PublicEndpoint string `json:"publicEndpoint,omitempty"`
}

// Keystone of the control plane.
type Keystone struct {
	// Mode is Managed (the operator runs Keystone) or External.
	// +kubebuilder:validation:Enum=Managed;External
	// +optional
	Mode    string `json:"mode,omitempty"`
	Service `json:",inline"`
}

// Services are the services the real CRD can run. Nova, Neutron, Cinder and
// the others of the docs have no fields yet.
type Services struct {
	// +optional
	Keystone *Keystone `json:"keystone,omitempty"`
	// +optional
	Horizon *Service `json:"horizon,omitempty"`
	// +optional
	Glance *Service `json:"glance,omitempty"`
	// +optional
	Placement *Service `json:"placement,omitempty"`
	// +optional
	Barbican *Service `json:"barbican,omitempty"`
}

// CloudCredentialsRef names the clouds.yaml Secret of the admin credential.
type CloudCredentialsRef struct {
	CloudName  string `json:"cloudName"`
	SecretName string `json:"secretName"`
}

// AdminCredential is the K-ORC admin credential the operator mints.
type AdminCredential struct {
	CloudCredentialsRef CloudCredentialsRef `json:"cloudCredentialsRef"`
}

// KORC configures the operator's OpenStack resource controller.
type KORC struct {
	AdminCredential AdminCredential `json:"adminCredential"`
}

// Compute names the hypervisor pools the control plane's compute agents
// (Nova, OVN) are deployed on, as the C5C3 docs' ControlPlane does
// ("Provision OpenStack Cluster", step 3). The c5c3-operator's CRD does not
// have the field yet.
type Compute struct {
	// HypervisorClusters by pool name.
	// +optional
	HypervisorClusters []string `json:"hypervisorClusters,omitempty"`
}

// Storage names the storage pools the control plane's Cinder uses, as the
// C5C3 docs' ControlPlane does. The c5c3-operator's CRD does not have the
// field yet.
type Storage struct {
	// StorageClusters by pool name.
	// +optional
	StorageClusters []string `json:"storageClusters,omitempty"`
}

// ControlPlaneSpec is the desired state of a ControlPlane.
type ControlPlaneSpec struct {
	// +kubebuilder:validation:Pattern=`^\d{4}\.[12]$`
	OpenStackRelease string         `json:"openStackRelease"`
	Region           string         `json:"region,omitempty"`
	Infrastructure   Infrastructure `json:"infrastructure"`
	Services         Services       `json:"services"`
	KORC             *KORC          `json:"korc,omitempty"`
	// Compute and Storage are the C5C3 docs' pool references.
	// +optional
	Compute *Compute `json:"compute,omitempty"`
	// +optional
	Storage *Storage `json:"storage,omitempty"`
}

// ServiceStatus is a service's readiness.
type ServiceStatus struct {
	Name  string `json:"name"`
	Ready bool   `json:"ready"`
	// +optional
	Release string `json:"release,omitempty"`
}

// ControlPlaneStatus is the observed state of a ControlPlane.
type ControlPlaneStatus struct {
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// +optional
	UpdatePhase string `json:"updatePhase,omitempty"`
	// +optional
	Services []ServiceStatus `json:"services,omitempty"`
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ControlPlane is one OpenStack control plane of the c5c3-operator (one per
// namespace).
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
type ControlPlane struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ControlPlaneSpec   `json:"spec"`
	Status ControlPlaneStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ControlPlaneList is a list of ControlPlane.
type ControlPlaneList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ControlPlane `json:"items"`
}
