// Package v1alpha1 holds the provider's managed resources for Gardener:
// access to the Shoots that carry CobaltCore's clusters and pools.
//
// +kubebuilder:object:generate=true
// +groupName=gardener.provider.c5c3.io
// +versionName=v1alpha1
package v1alpha1
