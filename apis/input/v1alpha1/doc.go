// Package v1alpha1 holds the input of the pool composition functions: the
// platform's Gardener settings, which belong to the Composition (one per
// landscape) rather than to a tenant's claim.
//
// +kubebuilder:object:generate=true
// +groupName=input.crossplane.c5c3.io
// +versionName=v1alpha1
package v1alpha1
