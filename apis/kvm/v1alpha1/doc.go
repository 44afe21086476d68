// Package v1alpha1 holds the provider's managed resources for the KVM
// hypervisors of a pool cluster: read-only views of the Hypervisor
// resources (kvm.cloud.sap/v1, the openstack-hypervisor-operator's) that the
// pool's hypervisor agents keep up to date, which tell the hypervisor pool
// composition how many nodes are in service and what they offer.
//
// +kubebuilder:object:generate=true
// +groupName=kvm.provider.c5c3.io
// +versionName=v1alpha1
package v1alpha1
