package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AggregateParameters are the desired properties of a Aggregate.
type AggregateParameters struct {
	// Name of the aggregate.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	Name string `json:"name"`

	// AvailabilityZone the aggregate's hosts form; empty keeps them in the
	// default zone.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	AvailabilityZone string `json:"availabilityZone,omitempty"`

	// Metadata of the aggregate (scheduler filter keys such as
	// trait:CUSTOM_X or pinned flavors). filter_tenant_id is managed from
	// FilterTenantIDs and must not be set here.
	// +kubebuilder:validation:XValidation:rule="!('filter_tenant_id' in self)",message="spec.forProvider.metadata must not set filter_tenant_id; use filterTenantIDs"
	// +optional
	Metadata map[string]string `json:"metadata,omitempty"`

	// FilterTenantIDs are the projects whose instances may land on the
	// aggregate's hosts (Nova's tenant isolation: metadata filter_tenant_id).
	// +listType=set
	// +optional
	FilterTenantIDs []string `json:"filterTenantIDs,omitempty"`

	// FilterTenantIDRefs resolve FilterTenantIDs from
	// keystone.provider.c5c3.io Projects, again at every reconcile: given,
	// they replace FilterTenantIDs (unless one's resolution policy is
	// Optional).
	// +optional
	FilterTenantIDRefs []xpv2.Reference `json:"filterTenantIDRefs,omitempty"`

	// Hosts of the aggregate. Left to the hypervisor operator when empty:
	// it adds compute hosts as they register.
	// +listType=set
	// +optional
	Hosts []string `json:"hosts,omitempty"`
}

// AggregateObservation is the observed state of a Aggregate.
type AggregateObservation struct {
	// ID Nova assigned to the aggregate (its external name).
	// +optional
	ID string `json:"id,omitempty"`
	// Hosts in the aggregate.
	// +optional
	Hosts []string `json:"hosts,omitempty"`
}

// AggregateSpec is the desired state of a Aggregate.
type AggregateSpec struct {
	xpv2.ClusterManagedResourceSpec `json:",inline"`
	ForProvider                     AggregateParameters `json:"forProvider"`
}

// AggregateStatus is the observed state of a Aggregate.
type AggregateStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	AtProvider                 AggregateObservation `json:"atProvider,omitempty"`
}

// Aggregate is a Nova host aggregate, optionally exposed as an availability
// zone and limited to some projects. Its external name is Nova's ID.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories={crossplane,managed,openstack}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="SYNCED",type=string,JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="NAME",type=string,JSONPath=".spec.forProvider.name"
// +kubebuilder:printcolumn:name="ZONE",type=string,JSONPath=".spec.forProvider.availabilityZone"
// +kubebuilder:printcolumn:name="HOSTS",type=integer,JSONPath=".status.atProvider.hosts.length()",priority=1
// +kubebuilder:printcolumn:name="EXTERNAL-NAME",type=string,JSONPath=".metadata.annotations.crossplane\\.io/external-name"
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=".metadata.creationTimestamp"
type Aggregate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   AggregateSpec   `json:"spec"`
	Status AggregateStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// AggregateList is a list of Aggregate.
type AggregateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Aggregate `json:"items"`
}
