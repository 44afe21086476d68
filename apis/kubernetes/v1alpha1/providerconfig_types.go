package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterCredentials say how the provider reaches a remote cluster.
// +kubebuilder:validation:XValidation:rule="self.source != 'Secret' || has(self.secretRef)",message="spec.credentials.secretRef is required when spec.credentials.source is Secret"
type ClusterCredentials struct {
	// Source of the credentials: a Secret holding a kubeconfig of the
	// cluster (the compositions name a ShootKubeconfig's Secret), or the
	// provider's own in-cluster identity when it runs there.
	// +kubebuilder:validation:Enum=Secret;InjectedIdentity
	Source xpv2.CredentialsSource `json:"source"`

	xpv2.CommonCredentialSelectors `json:",inline"`
}

// ProviderConfigSpec is how the provider reaches a remote cluster.
type ProviderConfigSpec struct {
	// Credentials for the cluster. A SecretCopy needs "get", "create",
	// "patch" and "delete" on the Secrets it writes, in their namespace.
	Credentials ClusterCredentials `json:"credentials"`
}

// ProviderConfigStatus is the observed state of a ProviderConfig.
type ProviderConfigStatus struct {
	xpv2.ProviderConfigStatus `json:",inline"`
}

// ProviderConfig configures how the provider reaches a remote Kubernetes
// cluster to write the Secrets its SecretCopies copy.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories={crossplane,provider,kubernetes}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="SOURCE",type=string,JSONPath=".spec.credentials.source"
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
// +kubebuilder:resource:scope=Cluster,categories={crossplane,provider,kubernetes}
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

// ClusterCredentials are how the provider reaches the cluster: the source
// and its selectors.
func (pc *ProviderConfig) ClusterCredentials() (xpv2.CredentialsSource, xpv2.CommonCredentialSelectors) {
	return pc.Spec.Credentials.Source, pc.Spec.Credentials.CommonCredentialSelectors
}
