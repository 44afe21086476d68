package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// StorageReportParameters name the report a pool's storage agent publishes.
type StorageReportParameters struct {
	// CephStatus is the name of the storage agent's CephStatus
	// (storage.c5c3.io/v1alpha1, cluster-scoped) in the pool's cluster: the
	// agent's --name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:default="ceph"
	// +optional
	CephStatus string `json:"cephStatus,omitempty"`
}

// StorageHealthCheck is one failing Ceph health check.
type StorageHealthCheck struct {
	Name     string `json:"name"`
	Severity string `json:"severity"`
	// +optional
	Summary string `json:"summary,omitempty"`
}

// StorageReportObservation is the storage agent's last report, without the
// time it was published: that changes with every report, whether or not
// anything else did, and the report is read by the pool's composite, which
// Crossplane reconciles (and applies every composed resource of) at every
// change of it.
type StorageReportObservation struct {
	// Health is HEALTH_OK, HEALTH_WARN or HEALTH_ERR; empty until the
	// agent has published.
	// +optional
	Health string `json:"health,omitempty"`
	// Checks are the failing health checks, sorted by name.
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Checks []StorageHealthCheck `json:"checks,omitempty"`
	// TotalBytes, UsedBytes and AvailableBytes are the cluster's raw
	// capacity.
	// +optional
	TotalBytes int64 `json:"totalBytes,omitempty"`
	// +optional
	UsedBytes int64 `json:"usedBytes,omitempty"`
	// +optional
	AvailableBytes int64 `json:"availableBytes,omitempty"`
	// OSDs, those up and those in.
	// +optional
	OSDs int32 `json:"osds,omitempty"`
	// +optional
	OSDsUp int32 `json:"osdsUp,omitempty"`
	// +optional
	OSDsIn int32 `json:"osdsIn,omitempty"`
	// Monitors and those in quorum.
	// +optional
	Monitors int32 `json:"monitors,omitempty"`
	// +optional
	MonitorsInQuorum int32 `json:"monitorsInQuorum,omitempty"`
	// ReportInterval is how often the agent publishes.
	// +optional
	ReportInterval *metav1.Duration `json:"reportInterval,omitempty"`
	// StaleSince is the time of the agent's last report once that report is
	// older than three of its intervals (the agent stopped, or cannot
	// publish); unset while reports come.
	// +optional
	StaleSince *metav1.Time `json:"staleSince,omitempty"`
}

// StorageReportSpec is the desired state of a StorageReport.
type StorageReportSpec struct {
	xpv2.ClusterManagedResourceSpec `json:",inline"`
	// +optional
	ForProvider StorageReportParameters `json:"forProvider,omitempty"`
}

// StorageReportStatus is the observed state of a StorageReport.
type StorageReportStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	AtProvider                 StorageReportObservation `json:"atProvider,omitempty"`
}

// A StorageReport reads what a storage pool's agent publishes in the pool's
// cluster (its CephStatus: health, capacity, OSDs, monitors) and says when
// that report has gone stale. It only reads: it never changes the
// CephStatus, and deleting it leaves the cluster as it was. The provider
// watches the CephStatus and changes the StorageReport only when the report
// says something new, not at every heartbeat of the agent; a cluster whose
// API stops answering makes it Synced False within seconds, its last
// report kept.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories={crossplane,managed,cobaltcore}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="SYNCED",type=string,JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="HEALTH",type=string,JSONPath=".status.atProvider.health"
// +kubebuilder:printcolumn:name="OSDS-UP",type=integer,JSONPath=".status.atProvider.osdsUp"
// +kubebuilder:printcolumn:name="OSDS",type=integer,JSONPath=".status.atProvider.osds"
// +kubebuilder:printcolumn:name="STALE-SINCE",type=date,JSONPath=".status.atProvider.staleSince"
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=".metadata.creationTimestamp"
type StorageReport struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   StorageReportSpec   `json:"spec"`
	Status StorageReportStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// StorageReportList is a list of StorageReport.
type StorageReportList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []StorageReport `json:"items"`
}
