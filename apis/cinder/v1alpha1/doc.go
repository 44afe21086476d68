// Package v1alpha1 holds the provider's managed resources for Cinder: volume types
// bound to a backend, and quota sets.
//
// +kubebuilder:object:generate=true
// +groupName=cinder.provider.c5c3.io
// +versionName=v1alpha1
package v1alpha1
