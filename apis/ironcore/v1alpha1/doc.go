// Package v1alpha1 holds the provider's managed resources for IronCore bare
// metal: read-only views of the metal-operator inventory that tell the pool
// compositions how many servers a machine pool really has.
//
// +kubebuilder:object:generate=true
// +groupName=ironcore.provider.c5c3.io
// +versionName=v1alpha1
package v1alpha1
