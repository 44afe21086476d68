package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Keys of the TLS Secret of a ProviderConfig (a kubernetes.io/tls Secret
// with the CA beside it, as cert-manager writes them).
const (
	TLSSecretKeyCA   = "ca.crt"
	TLSSecretKeyCert = "tls.crt"
	TLSSecretKeyKey  = "tls.key"
)

// Database is how to reach one OVN database: its cluster members.
type Database struct {
	// Endpoints of the database's servers in ovsdb form: tcp:HOST:PORT,
	// ssl:HOST:PORT or unix:PATH. Give every member of a clustered
	// (Raft) database; the provider follows the leader.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=7
	// +kubebuilder:validation:items:Pattern=`^(tcp|ssl):[^:]+:[0-9]+$|^(tcp|ssl):\[[0-9a-fA-F:]+\]:[0-9]+$|^unix:/.+$`
	Endpoints []string `json:"endpoints"`
}

// ProviderConfigSpec is how the provider reaches an OVN deployment.
// +kubebuilder:validation:XValidation:rule="!(self.northbound.endpoints.exists(e, e.startsWith('ssl:')) || (has(self.southbound) && self.southbound.endpoints.exists(e, e.startsWith('ssl:')))) || has(self.tlsSecretRef)",message="spec.tlsSecretRef is required when an endpoint uses ssl:"
type ProviderConfigSpec struct {
	// Northbound database, where the managed rows live.
	Northbound Database `json:"northbound"`

	// Southbound database, read for chassis (HA chassis group members are
	// checked against it, ChassisSets observe it) and for what ovn-northd
	// made of the Northbound rows. Without it those checks are skipped and
	// ChassisSets cannot be observed.
	// +optional
	Southbound *Database `json:"southbound,omitempty"`

	// LeaderOnly makes the provider talk to the Raft leader only, so every
	// read follows every committed write. Turn it off only for databases
	// that are not clustered.
	// +kubebuilder:default=true
	// +optional
	LeaderOnly *bool `json:"leaderOnly,omitempty"`

	// TLSSecretRef names a Secret with the client certificate (tls.crt,
	// tls.key) and the CA (ca.crt) for ssl: endpoints.
	// +optional
	TLSSecretRef *xpv2.SecretReference `json:"tlsSecretRef,omitempty"`
}

// ProviderConfigStatus is the observed state of a ProviderConfig.
type ProviderConfigStatus struct {
	xpv2.ProviderConfigStatus `json:",inline"`
}

// ProviderConfig configures how the provider reaches an OVN Northbound
// (and optionally Southbound) database.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories={crossplane,provider,ovn}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="NORTHBOUND",type=string,JSONPath=".spec.northbound.endpoints[0]"
// +kubebuilder:printcolumn:name="USERS",type=integer,JSONPath=".status.users"
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=".metadata.creationTimestamp"
type ProviderConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ProviderConfigSpec   `json:"spec"`
	Status ProviderConfigStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ProviderConfigList is a list of ProviderConfig.
type ProviderConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ProviderConfig `json:"items"`
}

// ProviderConfigUsage records that a managed resource uses a ProviderConfig,
// so a ProviderConfig in use is not deleted.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories={crossplane,provider,ovn}
// +kubebuilder:printcolumn:name="CONFIG-NAME",type=string,JSONPath=".providerConfigRef.name"
// +kubebuilder:printcolumn:name="RESOURCE-KIND",type=string,JSONPath=".resourceRef.kind"
// +kubebuilder:printcolumn:name="RESOURCE-NAME",type=string,JSONPath=".resourceRef.name"
type ProviderConfigUsage struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	xpv2.ProviderConfigUsage `json:",inline"`
}

// +kubebuilder:object:root=true

// ProviderConfigUsageList is a list of ProviderConfigUsage.
type ProviderConfigUsageList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ProviderConfigUsage `json:"items"`
}
