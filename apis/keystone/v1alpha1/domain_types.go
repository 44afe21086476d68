package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DomainParameters are the desired properties of a Keystone domain.
type DomainParameters struct {
	// Name of the domain; unique in Keystone.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	Name string `json:"name"`

	// Description of the domain.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	Description string `json:"description,omitempty"`

	// Enabled domains can be used. Keystone refuses to delete an enabled
	// domain; the provider disables it first.
	// +kubebuilder:default=true
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
}

// DomainObservation is the observed state of a Keystone domain.
type DomainObservation struct {
	// ID Keystone assigned to the domain (also its external name).
	// +optional
	ID string `json:"id,omitempty"`
}

// DomainSpec is the desired state of a Domain.
type DomainSpec struct {
	xpv2.ClusterManagedResourceSpec `json:",inline"`
	ForProvider                     DomainParameters `json:"forProvider"`
}

// DomainStatus is the observed state of a Domain.
type DomainStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	AtProvider                 DomainObservation `json:"atProvider,omitempty"`
}

// Domain is a Keystone domain. Its external name is the ID Keystone
// assigned.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories={crossplane,managed,openstack}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="SYNCED",type=string,JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="NAME",type=string,JSONPath=".spec.forProvider.name"
// +kubebuilder:printcolumn:name="EXTERNAL-NAME",type=string,JSONPath=".metadata.annotations.crossplane\\.io/external-name"
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=".metadata.creationTimestamp"
type Domain struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   DomainSpec   `json:"spec"`
	Status DomainStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// DomainList is a list of Domain.
type DomainList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Domain `json:"items"`
}
