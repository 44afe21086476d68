package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ProjectIDReference names a Keystone project by ID, or resolves the ID from
// a Project managed resource. Resources of other services inline it; the
// rule that one of the three is set lives on their parameters, because CEL
// rules of an inlined type do not reach the type it is inlined into.
type ProjectIDReference struct {
	// ProjectID of the Keystone project.
	// +optional
	ProjectID string `json:"projectID,omitempty"`

	// ProjectIDRef resolves ProjectID from a keystone.provider.c5c3.io
	// Project, again at every reconcile: ProjectID follows the Project it
	// names (unless the reference's resolution policy is Optional).
	// +optional
	ProjectIDRef *xpv2.Reference `json:"projectIDRef,omitempty"`

	// ProjectIDSelector selects a Project to resolve ProjectID from.
	// +optional
	ProjectIDSelector *xpv2.Selector `json:"projectIDSelector,omitempty"`
}

// ProjectParameters are the desired properties of a Keystone project.
type ProjectParameters struct {
	// Name of the project in its domain.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	Name string `json:"name"`

	// DomainID of the project's domain.
	// +kubebuilder:default=default
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.forProvider.domainID is immutable"
	// +optional
	DomainID string `json:"domainID,omitempty"`

	// Description of the project.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	Description string `json:"description,omitempty"`

	// Enabled projects can be used.
	// +kubebuilder:default=true
	// +optional
	Enabled *bool `json:"enabled,omitempty"`

	// Tags of the project.
	// +kubebuilder:validation:MaxItems=80
	// +listType=set
	// +optional
	Tags []string `json:"tags,omitempty"`
}

// ProjectObservation is the observed state of a Keystone project.
type ProjectObservation struct {
	// ID Keystone assigned to the project (also its external name).
	// +optional
	ID string `json:"id,omitempty"`
}

// ProjectSpec is the desired state of a Project.
type ProjectSpec struct {
	xpv2.ClusterManagedResourceSpec `json:",inline"`
	ForProvider                     ProjectParameters `json:"forProvider"`
}

// ProjectStatus is the observed state of a Project.
type ProjectStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	AtProvider                 ProjectObservation `json:"atProvider,omitempty"`
}

// Project is a Keystone project. Its external name is the ID Keystone
// assigned; an existing project is adopted by name and domain before one is
// created.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories={crossplane,managed,openstack}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="SYNCED",type=string,JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="NAME",type=string,JSONPath=".spec.forProvider.name"
// +kubebuilder:printcolumn:name="EXTERNAL-NAME",type=string,JSONPath=".metadata.annotations.crossplane\\.io/external-name"
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=".metadata.creationTimestamp"
type Project struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ProjectSpec   `json:"spec"`
	Status ProjectStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ProjectList is a list of Project.
type ProjectList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Project `json:"items"`
}
