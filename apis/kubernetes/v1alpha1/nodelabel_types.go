package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodeLabelParameters name a label key and, per node, its value.
type NodeLabelParameters struct {
	// Key of the label. It is this resource's on the cluster: a node the
	// resource does not name loses it.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.forProvider.key cannot change: create another NodeLabel"
	Key string `json:"key"`
	// Values of the label by node name. A node that does not exist (yet)
	// is waited for and reported in status.atProvider.missing.
	// +kubebuilder:validation:MaxProperties=5000
	// +optional
	Values map[string]string `json:"values,omitempty"`
}

// NodeLabelSpec is the desired state of a NodeLabel.
type NodeLabelSpec struct {
	xpv2.ClusterManagedResourceSpec `json:",inline"`
	ForProvider                     NodeLabelParameters `json:"forProvider"`
}

// NodeLabelObservation is what the cluster's nodes carry.
type NodeLabelObservation struct {
	// Labelled is how many nodes carry the key with the value given.
	// +optional
	Labelled int32 `json:"labelled,omitempty"`
	// Missing are nodes spec.forProvider.values names that the cluster does
	// not have, by name.
	// +kubebuilder:validation:MaxItems=5000
	// +optional
	Missing []string `json:"missing,omitempty"`
}

// NodeLabelStatus is the observed state of a NodeLabel.
type NodeLabelStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	AtProvider                 NodeLabelObservation `json:"atProvider,omitempty"`
}

// A NodeLabel keeps one label on the nodes of a remote cluster: each node it
// names carries the key with its value, and every other node of the
// cluster is without the key. A hypervisor pool says with it which cloud
// each node serves (c5c3.io.node-restriction.kubernetes.io/cloud, which
// a node's own kubelet may not set), so that the cloud's compute agents are
// scheduled on its nodes. Deleting the NodeLabel removes the key from every
// node.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories={crossplane,managed,cobaltcore}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="SYNCED",type=string,JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="KEY",type=string,JSONPath=".spec.forProvider.key"
// +kubebuilder:printcolumn:name="LABELLED",type=integer,JSONPath=".status.atProvider.labelled"
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=".metadata.creationTimestamp"
type NodeLabel struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   NodeLabelSpec   `json:"spec"`
	Status NodeLabelStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// NodeLabelList is a list of NodeLabel.
type NodeLabelList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NodeLabel `json:"items"`
}
