package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CredentialsFormat says how the credentials Secret key is to be read.
// +kubebuilder:validation:Enum=Password;ApplicationCredential;CloudsYAML
type CredentialsFormat string

// Formats of OpenStack credentials.
const (
	// CredentialsFormatPassword is a JSON object with username, password,
	// userDomainName, projectName and projectDomainName.
	CredentialsFormatPassword CredentialsFormat = "Password"
	// CredentialsFormatApplicationCredential is a JSON object with
	// applicationCredentialID and applicationCredentialSecret.
	CredentialsFormatApplicationCredential CredentialsFormat = "ApplicationCredential"
	// CredentialsFormatCloudsYAML is a clouds.yaml; spec.credentials.cloud
	// picks the entry. This is what the c5c3-operator's K-ORC admin
	// credential Secret holds.
	CredentialsFormatCloudsYAML CredentialsFormat = "CloudsYAML"
)

// ProviderCredentials are where the provider finds a Keystone credential.
// +kubebuilder:validation:XValidation:rule="self.source != 'Secret' || has(self.secretRef)",message="spec.credentials.secretRef is required when spec.credentials.source is Secret"
type ProviderCredentials struct {
	// Source of the credentials.
	// +kubebuilder:validation:Enum=Secret
	Source xpv2.CredentialsSource `json:"source"`

	// Format of the credentials.
	// +kubebuilder:default=CloudsYAML
	// +optional
	Format CredentialsFormat `json:"format,omitempty"`

	// Cloud is the clouds.yaml entry to use.
	// +kubebuilder:default=admin
	// +optional
	Cloud string `json:"cloud,omitempty"`

	xpv2.CommonCredentialSelectors `json:",inline"`
}

// ProviderConfigSpec is how the provider reaches one OpenStack cloud.
type ProviderConfigSpec struct {
	// AuthURL of Keystone; taken from the clouds.yaml entry when empty.
	// +kubebuilder:validation:Pattern=`^https?://`
	// +optional
	AuthURL string `json:"authURL,omitempty"`

	// Region of the cloud's endpoints in the Keystone catalog.
	// +optional
	Region string `json:"region,omitempty"`

	// CABundleSecretRef is a PEM bundle the cloud's endpoints are verified
	// against, in addition to the system's roots.
	// +optional
	CABundleSecretRef *xpv2.SecretKeySelector `json:"caBundleSecretRef,omitempty"`

	// Credentials of a Keystone user or application credential that may
	// manage the resources (admin for aggregates, volume types and quotas).
	Credentials ProviderCredentials `json:"credentials"`
}

// ProviderConfigStatus is the observed state of a ProviderConfig.
type ProviderConfigStatus struct {
	xpv2.ProviderConfigStatus `json:",inline"`

	// Catalog is what the cloud's Keystone catalog serves in the
	// ProviderConfig's region, as the provider last read it (condition
	// CatalogRead says when it cannot). Compositions compose a service's
	// objects only when the catalog serves it.
	// +optional
	Catalog *Catalog `json:"catalog,omitempty"`
}

// Catalog is the part of a Keystone service catalog that the provider
// reads: the types of the services with a public endpoint in one region.
type Catalog struct {
	// Region whose endpoints were read.
	Region string `json:"region,omitempty"`
	// Services are the catalog types (compute, volumev3, block-storage,
	// network, image, identity, ...) with a public endpoint in Region,
	// sorted.
	// +listType=set
	// +optional
	Services []string `json:"services,omitempty"`
}

// ConditionCatalogRead says whether the provider could read the cloud's
// service catalog with the ProviderConfig's credentials.
const ConditionCatalogRead xpv2.ConditionType = "CatalogRead"

// ProviderConfig configures how the provider reaches an OpenStack cloud.
// Tokens are cached per credential, so steady-state polls issue none.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories={crossplane,provider,openstack}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="AUTH-URL",type=string,JSONPath=".spec.authURL"
// +kubebuilder:printcolumn:name="REGION",type=string,JSONPath=".spec.region"
// +kubebuilder:printcolumn:name="USERS",type=integer,JSONPath=".status.users"
// +kubebuilder:printcolumn:name="SERVICES",type=string,JSONPath=".status.catalog.services",priority=1
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
// +kubebuilder:resource:scope=Cluster,categories={crossplane,provider,openstack}
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
