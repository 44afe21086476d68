package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// CephStatus is a Ceph cluster as the storage agent reads it from the
// monitors: health, capacity, per-pool usage and OSD states. One per cluster
// (named by the agent's --name, "ceph" by default), written by the agent
// replica that holds the leader lease; the StorageCluster's pool status reads
// it.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,categories=c5c3
// +kubebuilder:printcolumn:name="Health",type=string,JSONPath=".status.health"
// +kubebuilder:printcolumn:name="OSDs Up",type=integer,JSONPath=".status.osds.up"
// +kubebuilder:printcolumn:name="OSDs",type=integer,JSONPath=".status.osds.total"
// +kubebuilder:printcolumn:name="Used",type=integer,JSONPath=".status.capacity.usedBytes",priority=1
// +kubebuilder:printcolumn:name="Available",type=integer,JSONPath=".status.capacity.availableBytes",priority=1
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reported",type=date,JSONPath=".status.reportedAt"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=".metadata.creationTimestamp"
type CephStatus struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Status CephStatusStatus `json:"status,omitempty"`
}

// CephStatusStatus is what the monitors report.
type CephStatusStatus struct {
	FSID string `json:"fsid,omitempty"`
	// Health is HEALTH_OK, HEALTH_WARN or HEALTH_ERR.
	Health string `json:"health,omitempty"`
	// Checks are the failing health checks, sorted by name.
	// +listType=map
	// +listMapKey=name
	Checks   []HealthCheck `json:"checks,omitempty"`
	Capacity Capacity      `json:"capacity,omitempty"`
	// Pools, sorted by name.
	// +listType=map
	// +listMapKey=name
	Pools []PoolUsage `json:"pools,omitempty"`
	OSDs  OSDSummary  `json:"osds,omitempty"`
	// Monitors counts the monitors and those in quorum.
	Monitors MonitorSummary `json:"monitors,omitempty"`
	// Conditions: Ready (published from a reachable cluster).
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// ReportedAt is when the agent last published, every ReportInterval
	// whether or not anything else changed: a report whose time stops
	// advancing comes from an agent that stopped, or through a cluster that
	// cannot be read, and the pool calls it stale.
	ReportedAt *metav1.Time `json:"reportedAt,omitempty"`
	// ReportInterval is how often the agent publishes.
	ReportInterval *metav1.Duration `json:"reportInterval,omitempty"`
}

// HealthCheck is one failing health check.
type HealthCheck struct {
	Name     string `json:"name"`
	Severity string `json:"severity"`
	Summary  string `json:"summary,omitempty"`
}

// Capacity is the cluster's raw capacity (ceph df's stats).
type Capacity struct {
	TotalBytes     int64 `json:"totalBytes"`
	UsedBytes      int64 `json:"usedBytes"`
	AvailableBytes int64 `json:"availableBytes"`
}

// PoolUsage is one pool's usage (ceph df's pools).
type PoolUsage struct {
	Name string `json:"name"`
	ID   int64  `json:"id"`
	// StoredBytes is what clients wrote; UsedBytes includes replication.
	StoredBytes int64 `json:"storedBytes"`
	UsedBytes   int64 `json:"usedBytes"`
	Objects     int64 `json:"objects"`
	// MaxAvailableBytes is what clients may still write to the pool.
	MaxAvailableBytes int64 `json:"maxAvailableBytes"`
}

// OSDSummary counts OSDs and lists their states.
type OSDSummary struct {
	Total int `json:"total"`
	Up    int `json:"up"`
	In    int `json:"in"`
	// States, sorted by ID.
	// +listType=map
	// +listMapKey=id
	States []OSDState `json:"states,omitempty"`
}

// OSDState is one OSD.
type OSDState struct {
	ID   int64  `json:"id"`
	Host string `json:"host,omitempty"`
	Up   bool   `json:"up"`
	In   bool   `json:"in"`
}

// MonitorSummary counts the monitors.
type MonitorSummary struct {
	Total    int `json:"total"`
	InQuorum int `json:"inQuorum"`
}

// CephStatusList is a list of CephStatus.
// +kubebuilder:object:root=true
type CephStatusList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []CephStatus `json:"items"`
}

func init() {
	SchemeBuilder.Register(&CephStatus{}, &CephStatusList{})
}
