package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// StretchModeParameters are the desired properties of a StretchMode. They
// cannot change once set: Ceph keeps the stretch mode it enabled.
type StretchModeParameters struct {
	// Root of the CRUSH hierarchy whose zones divide the cluster.
	// +kubebuilder:default=default
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_.-]+$`
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.forProvider.root is immutable"
	// +optional
	Root string `json:"root,omitempty"`

	// ZoneType is the CRUSH bucket type that divides the cluster in two
	// (Rook places each node's host under a bucket of type zone).
	// +kubebuilder:default=zone
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_.-]+$`
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.forProvider.zoneType is immutable"
	// +optional
	ZoneType string `json:"zoneType,omitempty"`

	// DeviceClass every OSD under Root must have ("" any): stretch mode is
	// not enabled, and says why, while an OSD under the root has another.
	// The rule, stretch_<zoneType> (the rule of the provider's stretched
	// Pools, so that stretch mode and they place data alike), takes every
	// OSD under the root and never a device class: Ceph's stretch mode
	// cannot serve a pool whose rule takes one once a zone is lost.
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_.-]*$`
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.forProvider.deviceClass is immutable"
	// +optional
	DeviceClass string `json:"deviceClass,omitempty"`

	// TiebreakerZone is where the tiebreaker monitor is located: the
	// arbiter's site, a third zone holding no OSD.
	// +kubebuilder:default=arbiter
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_.-]+$`
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.forProvider.tiebreakerZone is immutable"
	// +optional
	TiebreakerZone string `json:"tiebreakerZone,omitempty"`
}

// MonitorLocation is where a monitor runs and is located.
type MonitorLocation struct {
	// Name of the monitor.
	Name string `json:"name"`
	// Host the monitor runs on (under Rook, its pod's node).
	// +optional
	Host string `json:"host,omitempty"`
	// Zone the monitor is located in ("" none yet).
	// +optional
	Zone string `json:"zone,omitempty"`
}

// StretchModeObservation is the observed state of a StretchMode.
type StretchModeObservation struct {
	// Enabled: the monitors run in stretch mode.
	// +optional
	Enabled bool `json:"enabled,omitempty"`
	// TiebreakerMonitor is the tiebreaker's name.
	// +optional
	TiebreakerMonitor string `json:"tiebreakerMonitor,omitempty"`
	// Rule is the CRUSH rule every pool is placed by.
	// +optional
	Rule string `json:"rule,omitempty"`
	// Monitors, with their hosts and zones.
	// +optional
	Monitors []MonitorLocation `json:"monitors,omitempty"`
}

// StretchModeSpec is the desired state of a StretchMode.
type StretchModeSpec struct {
	xpv2.ClusterManagedResourceSpec `json:",inline"`
	ForProvider                     StretchModeParameters `json:"forProvider"`
}

// StretchModeStatus is the observed state of a StretchMode.
type StretchModeStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	AtProvider                 StretchModeObservation `json:"atProvider,omitempty"`
}

// StretchMode is Ceph's stretch mode for the cluster of its
// ProviderConfig: each monitor is located in the zone of the host it runs
// on, the one monitor on no host of a zone (the external arbiter's) is the
// tiebreaker, the monitors elect by connectivity, and every pool, present
// and future, keeps two replicas in each of the two zones (size 4, min_size
// 2) by the rule stretch_<zoneType>, which is made if
// missing. Until the cluster has exactly that (two zones of equal weight,
// one tiebreaker), Ready is False and says what is missing; nothing is
// changed.
//
// Deleting a StretchMode leaves Ceph in stretch mode: leaving it would
// lower every pool's placement, which is no resource's choice to make.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories={crossplane,managed,ceph}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="SYNCED",type=string,JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="ENABLED",type=boolean,JSONPath=".status.atProvider.enabled"
// +kubebuilder:printcolumn:name="TIEBREAKER",type=string,JSONPath=".status.atProvider.tiebreakerMonitor"
// +kubebuilder:printcolumn:name="RULE",type=string,JSONPath=".status.atProvider.rule"
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=".metadata.creationTimestamp"
type StretchMode struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   StretchModeSpec   `json:"spec"`
	Status StretchModeStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// StretchModeList is a list of StretchMode.
type StretchModeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []StretchMode `json:"items"`
}
