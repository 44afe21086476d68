package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// OVSNode is one node's Open vSwitch as its OVS agent reads it from the
// local Open_vSwitch database: bridges, ports, bonds and the ovn-controller
// settings. The agent owns it (named after the node, owned by the Node) and
// keeps it current; nobody else writes it.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,categories=c5c3
// +kubebuilder:printcolumn:name="System ID",type=string,JSONPath=".status.ovn.systemID"
// +kubebuilder:printcolumn:name="Encap IP",type=string,JSONPath=".status.ovn.encapIP"
// +kubebuilder:printcolumn:name="Zones",type=string,JSONPath=".status.ovn.availabilityZones"
// +kubebuilder:printcolumn:name="Bridges",type=integer,JSONPath=".status.bridgeCount"
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=".metadata.creationTimestamp"
type OVSNode struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Status OVSNodeStatus `json:"status,omitempty"`
}

// OVSNodeStatus is what the Open_vSwitch database says.
type OVSNodeStatus struct {
	// OVSVersion and DBVersion are the Open_vSwitch row's ovs_version and db_version.
	OVSVersion string `json:"ovsVersion,omitempty"`
	DBVersion  string `json:"dbVersion,omitempty"`
	// OVN holds ovn-controller's settings (the Open_vSwitch row's external_ids).
	OVN OVNSettings `json:"ovn,omitempty"`
	// BridgeCount is the number of bridges.
	BridgeCount int `json:"bridgeCount"`
	// Bridges, sorted by name.
	// +listType=map
	// +listMapKey=name
	Bridges []Bridge `json:"bridges,omitempty"`
	// Conditions: Ready (published from a live database) and
	// AvailabilityZonesApplied (ovn-cms-options carries the node's zones).
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// OVNSettings are ovn-controller's settings for this chassis.
type OVNSettings struct {
	// SystemID is the chassis name (external_ids:system-id).
	SystemID string `json:"systemID,omitempty"`
	// Remote is the Southbound database ovn-controller connects to.
	Remote string `json:"remote,omitempty"`
	// EncapType and EncapIP are the tunnel settings (geneve, the node's IP).
	EncapType string `json:"encapType,omitempty"`
	EncapIP   string `json:"encapIP,omitempty"`
	// BridgeMappings maps physical networks to bridges (physnet1:br-ex).
	BridgeMappings string `json:"bridgeMappings,omitempty"`
	// CMSOptions is external_ids:ovn-cms-options as written.
	CMSOptions string `json:"cmsOptions,omitempty"`
	// AvailabilityZones are the zones in ovn-cms-options, which the agent sets
	// from the node's zone label; Neutron schedules gateways by them.
	AvailabilityZones []string `json:"availabilityZones,omitempty"`
}

// Bridge is one OVS bridge.
type Bridge struct {
	Name         string `json:"name"`
	DatapathType string `json:"datapathType,omitempty"`
	FailMode     string `json:"failMode,omitempty"`
	// Ports, sorted by name.
	Ports []Port `json:"ports,omitempty"`
}

// Port is one port of a bridge; a bond is a port with several interfaces.
type Port struct {
	Name       string      `json:"name"`
	Interfaces []Interface `json:"interfaces,omitempty"`
	// Bond is set for a port with more than one interface.
	Bond *Bond `json:"bond,omitempty"`
}

// Bond is a bonded port's settings.
type Bond struct {
	// Mode is bond_mode (active-backup, balance-slb, balance-tcp).
	Mode string `json:"mode,omitempty"`
	// LACP is active, passive or off.
	LACP string `json:"lacp,omitempty"`
}

// Interface is one interface of a port.
type Interface struct {
	Name string `json:"name"`
	// Type is the OVS interface type ("" for a system interface, internal, geneve, patch, …).
	Type      string `json:"type,omitempty"`
	OFPort    *int64 `json:"ofport,omitempty"`
	LinkState string `json:"linkState,omitempty"`
	MAC       string `json:"mac,omitempty"`
	// Error is what OVS reports when it cannot set the interface up.
	Error string `json:"error,omitempty"`
}

// OVSNodeList is a list of OVSNodes.
// +kubebuilder:object:root=true
type OVSNodeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OVSNode `json:"items"`
}

func init() {
	SchemeBuilder.Register(&OVSNode{}, &OVSNodeList{})
}
