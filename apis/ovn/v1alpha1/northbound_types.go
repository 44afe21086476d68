package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// HAChassis is one member of an HA chassis group.
type HAChassis struct {
	// Name of the chassis: its Southbound Chassis name (the node's OVS
	// system-id). It must be registered in the Southbound database when the
	// ProviderConfig has one.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Priority of the chassis: the live chassis with the highest priority
	// hosts the gateway.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=32767
	Priority int32 `json:"priority"`
}

// HAChassisGroupParameters are the desired properties of an HA chassis group.
type HAChassisGroupParameters struct {
	// Name of the group (HA_Chassis_Group.name, unique in the database).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.forProvider.name is immutable"
	Name string `json:"name"`

	// Chassis of the group with their priorities.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	// +listType=map
	// +listMapKey=name
	Chassis []HAChassis `json:"chassis"`

	// ExternalIDs added to the row beside the provider's ownership keys.
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.startsWith('neutron:') && !k.startsWith('cobaltcore.c5c3.io/'))",message="spec.forProvider.externalIDs keys must not start with neutron: or cobaltcore.c5c3.io/"
	// +optional
	ExternalIDs map[string]string `json:"externalIDs,omitempty"`
}

// HAChassisGroupObservation is the observed state of an HA chassis group.
type HAChassisGroupObservation struct {
	// UUID of the row.
	// +optional
	UUID string `json:"uuid,omitempty"`
	// Members of the group, by chassis name, highest priority first.
	// +optional
	Members []string `json:"members,omitempty"`
}

// HAChassisGroupSpec is the desired state of an HAChassisGroup.
type HAChassisGroupSpec struct {
	xpv2.ClusterManagedResourceSpec `json:",inline"`
	ForProvider                     HAChassisGroupParameters `json:"forProvider"`
}

// HAChassisGroupStatus is the observed state of an HAChassisGroup.
type HAChassisGroupStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	AtProvider                 HAChassisGroupObservation `json:"atProvider,omitempty"`
}

// HAChassisGroup is an OVN Northbound HA_Chassis_Group: the chassis, with
// priorities, that may host a pool's or an availability zone's gateways.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories={crossplane,managed,ovn}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="SYNCED",type=string,JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="GROUP",type=string,JSONPath=".spec.forProvider.name"
// +kubebuilder:printcolumn:name="EXTERNAL-NAME",type=string,JSONPath=".metadata.annotations.crossplane\\.io/external-name"
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=".metadata.creationTimestamp"
type HAChassisGroup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   HAChassisGroupSpec   `json:"spec"`
	Status HAChassisGroupStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// HAChassisGroupList is a list of HAChassisGroup.
type HAChassisGroupList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []HAChassisGroup `json:"items"`
}

// LogicalSwitchParameters are the desired properties of a logical switch.
type LogicalSwitchParameters struct {
	// Name of the switch. OVN does not make switch names unique; this
	// provider does: a switch of that name it did not write is refused.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.forProvider.name is immutable"
	Name string `json:"name"`

	// OtherConfig of the switch (for example subnet, mcast_snoop). Only
	// these keys are managed.
	// +optional
	OtherConfig map[string]string `json:"otherConfig,omitempty"`

	// ExternalIDs added to the row beside the provider's ownership keys.
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.startsWith('neutron:') && !k.startsWith('cobaltcore.c5c3.io/'))",message="spec.forProvider.externalIDs keys must not start with neutron: or cobaltcore.c5c3.io/"
	// +optional
	ExternalIDs map[string]string `json:"externalIDs,omitempty"`
}

// DatapathObservation is what ovn-northd made of a switch or router.
type DatapathObservation struct {
	// UUID of the Northbound row.
	// +optional
	UUID string `json:"uuid,omitempty"`
	// TunnelKey of the Southbound Datapath_Binding ovn-northd made for
	// the row; empty until northd has processed it (or without a
	// Southbound database in the ProviderConfig).
	// +optional
	TunnelKey *int64 `json:"tunnelKey,omitempty"`
	// Ports attached to the row (by anyone).
	// +optional
	Ports int32 `json:"ports,omitempty"`
}

// LogicalSwitchSpec is the desired state of a LogicalSwitch.
type LogicalSwitchSpec struct {
	xpv2.ClusterManagedResourceSpec `json:",inline"`
	ForProvider                     LogicalSwitchParameters `json:"forProvider"`
}

// LogicalSwitchStatus is the observed state of a LogicalSwitch.
type LogicalSwitchStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	AtProvider                 DatapathObservation `json:"atProvider,omitempty"`
}

// LogicalSwitch is an OVN Northbound Logical_Switch for an infrastructure
// network. Ports are left to whoever attaches them.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories={crossplane,managed,ovn}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="SYNCED",type=string,JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="SWITCH",type=string,JSONPath=".spec.forProvider.name"
// +kubebuilder:printcolumn:name="TUNNEL-KEY",type=integer,JSONPath=".status.atProvider.tunnelKey"
// +kubebuilder:printcolumn:name="EXTERNAL-NAME",type=string,JSONPath=".metadata.annotations.crossplane\\.io/external-name"
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=".metadata.creationTimestamp"
type LogicalSwitch struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   LogicalSwitchSpec   `json:"spec"`
	Status LogicalSwitchStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// LogicalSwitchList is a list of LogicalSwitch.
type LogicalSwitchList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []LogicalSwitch `json:"items"`
}

// LogicalRouterParameters are the desired properties of a logical router.
type LogicalRouterParameters struct {
	// Name of the router, unique among the routers this provider writes
	// (a router of that name it did not write is refused).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.forProvider.name is immutable"
	Name string `json:"name"`

	// Enabled routers forward traffic.
	// +kubebuilder:default=true
	// +optional
	Enabled *bool `json:"enabled,omitempty"`

	// Options of the router (for example chassis, always_learn_from_arp_request).
	// Only these keys are managed.
	// +optional
	Options map[string]string `json:"options,omitempty"`

	// ExternalIDs added to the row beside the provider's ownership keys.
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.startsWith('neutron:') && !k.startsWith('cobaltcore.c5c3.io/'))",message="spec.forProvider.externalIDs keys must not start with neutron: or cobaltcore.c5c3.io/"
	// +optional
	ExternalIDs map[string]string `json:"externalIDs,omitempty"`
}

// LogicalRouterSpec is the desired state of a LogicalRouter.
type LogicalRouterSpec struct {
	xpv2.ClusterManagedResourceSpec `json:",inline"`
	ForProvider                     LogicalRouterParameters `json:"forProvider"`
}

// LogicalRouterStatus is the observed state of a LogicalRouter.
type LogicalRouterStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	AtProvider                 DatapathObservation `json:"atProvider,omitempty"`
}

// LogicalRouter is an OVN Northbound Logical_Router for infrastructure
// networks. Ports, routes and NAT are left to whoever attaches them.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories={crossplane,managed,ovn}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="SYNCED",type=string,JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="ROUTER",type=string,JSONPath=".spec.forProvider.name"
// +kubebuilder:printcolumn:name="TUNNEL-KEY",type=integer,JSONPath=".status.atProvider.tunnelKey"
// +kubebuilder:printcolumn:name="EXTERNAL-NAME",type=string,JSONPath=".metadata.annotations.crossplane\\.io/external-name"
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=".metadata.creationTimestamp"
type LogicalRouter struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   LogicalRouterSpec   `json:"spec"`
	Status LogicalRouterStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// LogicalRouterList is a list of LogicalRouter.
type LogicalRouterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []LogicalRouter `json:"items"`
}

// NBGlobalParameters are the NB_Global options to manage.
type NBGlobalParameters struct {
	// Options of NB_Global to set (for example mac_prefix,
	// northd_probe_interval). Only these keys are managed; deleting the
	// resource removes them, so OVN's defaults apply again.
	// +kubebuilder:validation:MinProperties=1
	Options map[string]string `json:"options"`
}

// NBGlobalObservation is the observed state of NB_Global.
type NBGlobalObservation struct {
	// UUID of the NB_Global row.
	// +optional
	UUID string `json:"uuid,omitempty"`
	// NBCfg, SBCfg and HVCfg are the sequence numbers of the last change
	// requested, processed by ovn-northd and by every hypervisor.
	// +optional
	NBCfg int64 `json:"nbCfg,omitempty"`
	// +optional
	SBCfg int64 `json:"sbCfg,omitempty"`
	// +optional
	HVCfg int64 `json:"hvCfg,omitempty"`
}

// NBGlobalSpec is the desired state of an NBGlobal.
type NBGlobalSpec struct {
	xpv2.ClusterManagedResourceSpec `json:",inline"`
	ForProvider                     NBGlobalParameters `json:"forProvider"`
}

// NBGlobalStatus is the observed state of an NBGlobal.
type NBGlobalStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	AtProvider                 NBGlobalObservation `json:"atProvider,omitempty"`
}

// NBGlobal manages options of the Northbound database's single NB_Global
// row. It never creates or deletes that row.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories={crossplane,managed,ovn}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="SYNCED",type=string,JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="NB-CFG",type=integer,JSONPath=".status.atProvider.nbCfg"
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=".metadata.creationTimestamp"
type NBGlobal struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   NBGlobalSpec   `json:"spec"`
	Status NBGlobalStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// NBGlobalList is a list of NBGlobal.
type NBGlobalList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NBGlobal `json:"items"`
}
