package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// State of a RemoteCluster or RemoteArbiter (Init, Progressing, Error,
// Ready, Deleting).
type State string

// States the operator reports.
const (
	StateReady State = "Ready"
	StateError State = "Error"
)

// KubeconfigSecretSource names the Secret, in the RemoteCluster's namespace,
// with a kubeconfig of the cluster the arbiter runs in.
type KubeconfigSecretSource struct {
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	Key string `json:"key,omitempty"`
}

// RemoteClusterSpec is how the operator reaches the arbiter's cluster.
type RemoteClusterSpec struct {
	// Timeout of requests to the remote cluster, a Go duration.
	// +optional
	Timeout string `json:"timeout,omitempty"`
	// CheckInterval of the remote cluster's health check, a Go duration.
	// +optional
	CheckInterval string `json:"checkInterval,omitempty"`
	// +optional
	AccessKeyRef KubeconfigSecretSource `json:"accesskeyRef,omitempty"`
	// Namespace in the remote cluster the arbiter is deployed to.
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// Status of a RemoteCluster or RemoteArbiter.
type Status struct {
	// +optional
	State State `json:"state,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
	// MonID of the external monitor (RemoteArbiter only).
	// +optional
	MonID string `json:"monId,omitempty"`
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// RemoteCluster is a cluster the operator can deploy arbiters to.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
type RemoteCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   RemoteClusterSpec `json:"spec"`
	Status Status            `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// RemoteClusterList is a list of RemoteCluster.
type RemoteClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []RemoteCluster `json:"items"`
}

// NamespacedReference names an object and its namespace.
type NamespacedReference struct {
	// +optional
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// RemoteClusterConfiguration names a RemoteCluster (or inlines one).
// +kubebuilder:validation:XValidation:rule="has(self.name) != has(self.spec)",message="exactly one of name and spec"
type RemoteClusterConfiguration struct {
	// +optional
	Spec *RemoteClusterSpec `json:"spec,omitempty"`
	// +optional
	Name string `json:"name,omitempty"`
}

// RemoteArbiterSpec is the external monitor of one Rook CephCluster.
type RemoteArbiterSpec struct {
	// CheckInterval of the arbiter's health check, a Go duration.
	// +optional
	CheckInterval string `json:"checkInterval,omitempty"`
	// CephCluster the monitor joins.
	CephCluster NamespacedReference `json:"cephCluster"`
	// RemoteCluster the monitor runs in.
	RemoteCluster RemoteClusterConfiguration `json:"remoteCluster"`
	// MonIDPrefix of the external monitor's ID (default ext-).
	// +optional
	MonIDPrefix string `json:"monIdPrefix,omitempty"`
}

// RemoteArbiter deploys a monitor of a Rook CephCluster in a remote cluster,
// the tie-breaker of a Ceph cluster stretched over two zones.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
type RemoteArbiter struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   RemoteArbiterSpec `json:"spec"`
	Status Status            `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// RemoteArbiterList is a list of RemoteArbiter.
type RemoteArbiterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []RemoteArbiter `json:"items"`
}
