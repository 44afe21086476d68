package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// VolumeTypeParameters are the desired properties of a VolumeType.
type VolumeTypeParameters struct {
	// Name of the volume type.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	Name string `json:"name"`

	// Description of the volume type.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	Description string `json:"description,omitempty"`

	// BackendName binds the type to a Cinder backend (extra spec
	// volume_backend_name). The backend must exist in cinder-volume's
	// enabled_backends; the provider reports one that no pool serves.
	// +kubebuilder:validation:MinLength=1
	BackendName string `json:"backendName"`

	// ExtraSpecs besides volume_backend_name.
	// +kubebuilder:validation:XValidation:rule="!('volume_backend_name' in self)",message="spec.forProvider.extraSpecs must not set volume_backend_name; use backendName"
	// +optional
	ExtraSpecs map[string]string `json:"extraSpecs,omitempty"`

	// IsPublic types are visible to every project; private ones only to
	// the projects granted access.
	// +kubebuilder:default=true
	// +optional
	IsPublic *bool `json:"isPublic,omitempty"`

	// AccessProjectIDRefs grant a private type to keystone.provider.c5c3.io
	// Projects, resolved again at every reconcile: given, they replace
	// AccessProjectIDs (unless one's resolution policy is Optional).
	// +optional
	AccessProjectIDRefs []xpv2.Reference `json:"accessProjectIDRefs,omitempty"`

	// AccessProjectIDs grant a private type to projects.
	// +listType=set
	// +optional
	AccessProjectIDs []string `json:"accessProjectIDs,omitempty"`
}

// VolumeTypeObservation is the observed state of a VolumeType.
type VolumeTypeObservation struct {
	// ID Cinder assigned to the type (its external name).
	// +optional
	ID string `json:"id,omitempty"`
}

// VolumeTypeSpec is the desired state of a VolumeType.
type VolumeTypeSpec struct {
	xpv2.ClusterManagedResourceSpec `json:",inline"`
	ForProvider                     VolumeTypeParameters `json:"forProvider"`
}

// VolumeTypeStatus is the observed state of a VolumeType.
type VolumeTypeStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	AtProvider                 VolumeTypeObservation `json:"atProvider,omitempty"`
}

// VolumeType is a Cinder volume type bound to one backend. Its external name
// is Cinder's ID.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories={crossplane,managed,openstack}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="SYNCED",type=string,JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="NAME",type=string,JSONPath=".spec.forProvider.name"
// +kubebuilder:printcolumn:name="BACKEND",type=string,JSONPath=".spec.forProvider.backendName"
// +kubebuilder:printcolumn:name="EXTERNAL-NAME",type=string,JSONPath=".metadata.annotations.crossplane\\.io/external-name"
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=".metadata.creationTimestamp"
type VolumeType struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   VolumeTypeSpec   `json:"spec"`
	Status VolumeTypeStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// VolumeTypeList is a list of VolumeType.
type VolumeTypeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VolumeType `json:"items"`
}
