package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterAccessParameters say what the access may reach.
// +kubebuilder:validation:XValidation:rule="!has(self.workloads) || !self.workloads || (has(self.nodeSelector) && size(self.nodeSelector) > 0)",message="spec.forProvider.nodeSelector is required with workloads: the node labels the workloads are confined to"
type ClusterAccessParameters struct {
	// Namespace the ServiceAccount lives in and may use as Workloads says. It is
	// created when absent and never deleted: what runs there is not the
	// access's.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.forProvider.namespace cannot change: create another ClusterAccess"
	Namespace string `json:"namespace"`
	// ServiceAccount the access is, in the namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.forProvider.serviceAccount cannot change: create another ClusterAccess"
	ServiceAccount string `json:"serviceAccount"`
	// Nodes the ServiceAccount may read, by name (get, and list or watch
	// with a metadata.name field selector, as RBAC's resourceNames allow):
	// every other node, and every other namespace, is forbidden to it. It
	// may not write them: their labels place the clouds' workloads.
	// +kubebuilder:validation:MaxItems=5000
	// +listType=set
	// +optional
	Nodes []string `json:"nodes,omitempty"`
	// Workloads lets the ServiceAccount run DaemonSets in the namespace
	// (where a cloud's control plane deploys nova-compute and
	// ovn-controller: a hypervisor pool), read their pods and delete one to
	// restart it. Without it (a storage pool) it keeps ConfigMaps and
	// Secrets there and runs nothing. Either way it may not make RBAC,
	// ServiceAccounts, tokens, pods of its own or Services.
	// +optional
	Workloads bool `json:"workloads,omitempty"`
	// NodeSelector confines the workloads to their nodes: with Workloads,
	// every DaemonSet and pod of the namespace must select these node
	// labels, may not name a node (spec.nodeName), and mounts from the
	// host only what nova-compute, libvirt and ovn-controller need. The
	// provider puts a ValidatingAdmissionPolicy into the remote cluster
	// that refuses anything else, whoever asks. Each key is a label name
	// (the provider refuses one that is not).
	// +kubebuilder:validation:MaxProperties=4
	// +optional
	NodeSelector map[string]LabelValue `json:"nodeSelector,omitempty"`
	// TokenLifetime of the token the kubeconfig holds; a new token is
	// issued when a third of it is left.
	// +kubebuilder:default="24h"
	// +optional
	TokenLifetime *metav1.Duration `json:"tokenLifetime,omitempty"`
	// Server is the API server address the kubeconfig names, when the
	// cluster that uses it reaches the remote cluster elsewhere than the
	// provider does; the ProviderConfig's kubeconfig's server when empty.
	// +kubebuilder:validation:Pattern=`^https://`
	// +optional
	Server string `json:"server,omitempty"`
}

// ClusterAccessSpec is the desired state of a ClusterAccess.
type ClusterAccessSpec struct {
	xpv2.ClusterManagedResourceSpec `json:",inline"`
	ForProvider                     ClusterAccessParameters `json:"forProvider"`
}

// ClusterAccessObservation is the access as issued. It never holds the
// token.
type ClusterAccessObservation struct {
	// ExpiresAt is when the token last published expires.
	// +optional
	ExpiresAt *metav1.Time `json:"expiresAt,omitempty"`
	// Nodes the ServiceAccount may reach, as its ClusterRole names them.
	// +optional
	Nodes int32 `json:"nodes,omitempty"`
}

// ClusterAccessStatus is the observed state of a ClusterAccess.
type ClusterAccessStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	AtProvider                 ClusterAccessObservation `json:"atProvider,omitempty"`
}

// A ClusterAccess issues a kubeconfig of a remote cluster for a
// ServiceAccount that may use one namespace and read and label named nodes
// there, and nothing else: never an admin credential. It keeps the
// ServiceAccount, a Role and RoleBinding in the namespace and a ClusterRole
// and ClusterRoleBinding limited to the nodes by name; the kubeconfig (a
// bound token, renewed before it expires) is published in the connection
// secret under the key kubeconfig, beside namespaces (the namespace, as a
// multicluster operator's cluster registration takes it). A cloud gives its
// control plane such a kubeconfig of each of its pools. Deleting the
// ClusterAccess deletes the ServiceAccount, which invalidates its tokens,
// and its roles.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories={crossplane,managed,cobaltcore}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="SYNCED",type=string,JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="NAMESPACE",type=string,JSONPath=".spec.forProvider.namespace"
// +kubebuilder:printcolumn:name="NODES",type=integer,JSONPath=".status.atProvider.nodes"
// +kubebuilder:printcolumn:name="EXPIRES",type=date,JSONPath=".status.atProvider.expiresAt"
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=".metadata.creationTimestamp"
type ClusterAccess struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ClusterAccessSpec   `json:"spec"`
	Status ClusterAccessStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ClusterAccessList is a list of ClusterAccess.
type ClusterAccessList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterAccess `json:"items"`
}

// LabelValue is a Kubernetes label value.
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=63
// +kubebuilder:validation:Pattern=`^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`
type LabelValue string
