package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CephCredentials are where the provider finds a CephX key.
// +kubebuilder:validation:XValidation:rule="self.source != 'Secret' || has(self.secretRef)",message="spec.credentials.secretRef is required when spec.credentials.source is Secret"
type CephCredentials struct {
	// Source of the credentials.
	// +kubebuilder:validation:Enum=Secret
	Source xpv2.CredentialsSource `json:"source"`

	xpv2.CommonCredentialSelectors `json:",inline"`
}

// ProviderConfigSpec is how the provider reaches one Ceph cluster.
type ProviderConfigSpec struct {
	// MonHosts are the monitors' addresses (host:port, or Rook's
	// name=host:port list). When empty they are read from the key
	// mon_host of the credentials Secret, which is how a storage pool
	// publishes them.
	// +kubebuilder:validation:MaxItems=9
	// +optional
	MonHosts []string `json:"monHosts,omitempty"`

	// User is the CephX user (without "client."); it must be allowed to
	// manage pools and auth entities.
	// +kubebuilder:default=admin
	// +optional
	User string `json:"user,omitempty"`

	// Credentials hold the user's key.
	Credentials CephCredentials `json:"credentials"`
}

// ProviderConfigStatus is the observed state of a ProviderConfig.
type ProviderConfigStatus struct {
	xpv2.ProviderConfigStatus `json:",inline"`
}

// ProviderConfig configures how the provider reaches a Ceph cluster's
// monitors. A StorageCluster composes one for its pool.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories={crossplane,provider,ceph}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="USER",type=string,JSONPath=".spec.user"
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
// +kubebuilder:resource:scope=Cluster,categories={crossplane,provider,ceph}
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
