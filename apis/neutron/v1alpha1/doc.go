// Package v1alpha1 holds the provider's managed resources for Neutron.
//
// +kubebuilder:object:generate=true
// +groupName=neutron.provider.c5c3.io
// +versionName=v1alpha1
package v1alpha1
