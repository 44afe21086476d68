// Package v1alpha1 holds the provider's ProviderConfig for a Ceph cluster and its
// managed resources there: RBD pools and CephX clients.
//
// +kubebuilder:object:generate=true
// +groupName=ceph.provider.c5c3.io
// +versionName=v1alpha1
package v1alpha1
