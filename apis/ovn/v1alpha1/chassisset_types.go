package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ChassisSetParameters select Southbound chassis.
// +kubebuilder:validation:XValidation:rule="has(self.availabilityZones) || has(self.names)",message="spec.forProvider sets availabilityZones or names"
type ChassisSetParameters struct {
	// AvailabilityZones select the chassis whose ovn-controller announces
	// one of them (other_config ovn-cms-options availability-zones=a:b,
	// as the OVS agent sets it from the node's pool and zone).
	// +kubebuilder:validation:MaxItems=32
	// +optional
	AvailabilityZones []string `json:"availabilityZones,omitempty"`

	// Names select chassis by name (system-id) or hostname.
	// +kubebuilder:validation:MaxItems=1024
	// +optional
	Names []string `json:"names,omitempty"`

	// MinChassis registered for the set to be Ready.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +optional
	MinChassis int32 `json:"minChassis,omitempty"`
}

// ObservedChassis is one registered chassis.
type ObservedChassis struct {
	// Name (system-id) of the chassis.
	Name string `json:"name"`
	// Hostname of the node.
	// +optional
	Hostname string `json:"hostname,omitempty"`
	// AvailabilityZones the chassis announces.
	// +optional
	AvailabilityZones []string `json:"availabilityZones,omitempty"`
	// EncapIPs are its tunnel endpoints.
	// +optional
	EncapIPs []string `json:"encapIPs,omitempty"`
	// Gateway is true for chassis that announce enable-chassis-as-gw.
	// +optional
	Gateway bool `json:"gateway,omitempty"`
}

// ChassisSetObservation is what the Southbound database says of the set.
type ChassisSetObservation struct {
	// Count of the selected chassis.
	Count int32 `json:"count"`
	// Chassis selected, by name.
	// +optional
	Chassis []ObservedChassis `json:"chassis,omitempty"`
}

// ChassisSetSpec is the desired state of a ChassisSet.
type ChassisSetSpec struct {
	xpv2.ClusterManagedResourceSpec `json:",inline"`
	ForProvider                     ChassisSetParameters `json:"forProvider"`
}

// ChassisSetStatus is the observed state of a ChassisSet.
type ChassisSetStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	AtProvider                 ChassisSetObservation `json:"atProvider,omitempty"`
}

// ChassisSet observes the Southbound chassis of a pool or availability
// zone: which hypervisors' ovn-controllers are registered, with their zones
// and tunnel endpoints. It writes nothing. It is Ready when at least
// minChassis are registered.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories={crossplane,managed,ovn}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="SYNCED",type=string,JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="CHASSIS",type=integer,JSONPath=".status.atProvider.count"
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=".metadata.creationTimestamp"
type ChassisSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ChassisSetSpec   `json:"spec"`
	Status ChassisSetStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ChassisSetList is a list of ChassisSet.
type ChassisSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ChassisSet `json:"items"`
}
