// Package v1alpha1 holds the ProviderConfig through which the provider reaches an
// OpenStack cloud's Keystone (and, from its catalog, Nova, Cinder and Neutron).
//
// +kubebuilder:object:generate=true
// +groupName=openstack.provider.c5c3.io
// +versionName=v1alpha1
package v1alpha1
