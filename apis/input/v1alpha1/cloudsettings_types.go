package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Environment of an OpenStackCluster Composition variant.
// +kubebuilder:validation:Enum=production;staging;development
type Environment string

// Environments of the OpenStackCluster Composition variants.
const (
	EnvironmentProduction  Environment = "production"
	EnvironmentStaging     Environment = "staging"
	EnvironmentDevelopment Environment = "development"
)

// CloudSettings are what an OpenStackCluster Composition variant sets for the
// clouds it composes: the environment, and the largest control-plane size
// preset it allows (a staging cloud asking for xlarge gets the cap).
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:categories=crossplane
type CloudSettings struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Environment of the variant.
	Environment Environment `json:"environment"`

	// MaxSize caps the size preset of the clouds (small, medium, large,
	// xlarge); empty means no cap.
	// +kubebuilder:validation:Enum=small;medium;large;xlarge
	// +optional
	MaxSize string `json:"maxSize,omitempty"`
}
