package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SecretSource is the Secret of the management cluster whose keys are
// copied.
type SecretSource struct {
	// Namespace of the Secret: one the provider copies from (its flag
	// --secret-copy-source-namespaces, default crossplane-system).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace"`
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// KeyCopy copies one key of the source Secret.
type KeyCopy struct {
	// From is the key in the source Secret.
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	// +kubebuilder:validation:MaxLength=253
	From string `json:"from"`
	// To is the key in the remote Secret; empty is From.
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	// +kubebuilder:validation:MaxLength=253
	// +optional
	To string `json:"to,omitempty"`
}

// Key is the key the value is written under in the remote Secret.
func (k KeyCopy) Key() string {
	if k.To != "" {
		return k.To
	}
	return k.From
}

// SecretTarget is the Secret written in the remote cluster.
type SecretTarget struct {
	// Namespace of the Secret; it must exist.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.forProvider.target.namespace cannot change: create another SecretCopy"
	Namespace string `json:"namespace"`
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.forProvider.target.name cannot change: create another SecretCopy"
	Name string `json:"name"`
	// Labels of the Secret.
	// +kubebuilder:validation:MaxProperties=32
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
}

// SecretCopyParameters say what is copied where.
type SecretCopyParameters struct {
	// Source is the Secret of the management cluster to copy from.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.forProvider.source cannot change: create another SecretCopy"
	Source SecretSource `json:"source"`
	// Keys copied from the source. A key the source does not have yet is
	// waited for.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +listType=map
	// +listMapKey=from
	Keys []KeyCopy `json:"keys"`
	// Literals are keys written as they are, beside the copied ones: values
	// that are not secret (a CephX entity's name). A key cannot be both.
	// +kubebuilder:validation:MaxProperties=16
	// +optional
	Literals map[string]string `json:"literals,omitempty"`
	// Target is the Secret written in the cluster the ProviderConfig
	// reaches.
	Target SecretTarget `json:"target"`
}

// SecretCopySpec is the desired state of a SecretCopy.
type SecretCopySpec struct {
	xpv2.ClusterManagedResourceSpec `json:",inline"`
	ForProvider                     SecretCopyParameters `json:"forProvider"`
}

// SecretCopyObservation is what the copy last wrote. It never holds a value
// of the Secret, nor anything derived from one.
type SecretCopyObservation struct {
	// Keys the remote Secret holds, copied and literal.
	// +optional
	Keys []string `json:"keys,omitempty"`
	// SourceResourceVersion is the source Secret's version the remote
	// Secret was last found equal to.
	// +optional
	SourceResourceVersion string `json:"sourceResourceVersion,omitempty"`
}

// SecretCopyStatus is the observed state of a SecretCopy.
type SecretCopyStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	AtProvider                 SecretCopyObservation `json:"atProvider,omitempty"`
}

// A SecretCopy keeps a Secret of a remote cluster equal to keys of a Secret
// of the management cluster: the way a connection secret (a CephX key, a
// kubeconfig) reaches the cluster that uses it without its value ever being
// written into a Crossplane object, an annotation or a status. The remote
// Secret is written with a plain create or update (no last-applied
// annotation) and carries the copy's name in a label; a Secret of that name
// the copy did not write is refused, not taken over. Deleting the
// SecretCopy deletes the remote Secret. The source must be in a namespace
// the provider copies from (its flag --secret-copy-source-namespaces) and
// read by no ProviderConfig.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories={crossplane,managed,cobaltcore}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="SYNCED",type=string,JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="SOURCE",type=string,JSONPath=".spec.forProvider.source.name"
// +kubebuilder:printcolumn:name="TARGET-NAMESPACE",type=string,JSONPath=".spec.forProvider.target.namespace"
// +kubebuilder:printcolumn:name="TARGET",type=string,JSONPath=".spec.forProvider.target.name"
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=".metadata.creationTimestamp"
type SecretCopy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   SecretCopySpec   `json:"spec"`
	Status SecretCopyStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// SecretCopyList is a list of SecretCopy.
type SecretCopyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SecretCopy `json:"items"`
}
