// Package v1alpha1 holds the provider's managed resources for Keystone.
//
// +kubebuilder:object:generate=true
// +groupName=keystone.provider.c5c3.io
// +versionName=v1alpha1
package v1alpha1
