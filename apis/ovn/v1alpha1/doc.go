// Package v1alpha1 holds the provider's managed resources for OVN: the
// Northbound state a platform operator manages beside Neutron (HA chassis
// groups for gateway placement, infrastructure logical switches and
// routers, NB_Global options) and an observation of the Southbound chassis
// of a pool.
//
// Every row this provider writes carries ExternalIDManagedBy and
// ExternalIDResource in external_ids; rows Neutron owns (any "neutron:"
// key) are never written.
//
// +kubebuilder:object:generate=true
// +groupName=ovn.provider.c5c3.io
// +versionName=v1alpha1
package v1alpha1
