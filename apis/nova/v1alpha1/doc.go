// Package v1alpha1 holds the provider's managed resources for Nova: host aggregates
// with their availability zones, and quota sets.
//
// +kubebuilder:object:generate=true
// +groupName=nova.provider.c5c3.io
// +versionName=v1alpha1
package v1alpha1
