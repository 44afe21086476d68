package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Environment of an OpenStackCluster Composition variant.
// +kubebuilder:validation:Enum=production;staging;development
type Environment string

// Environments of the OpenStackCluster Composition variants.
const (
	EnvironmentProduction  Environment = "production"
	EnvironmentStaging     Environment = "staging"
	EnvironmentDevelopment Environment = "development"
)

// CloudSettings are what an OpenStackCluster Composition variant sets for the
// clouds it composes: the environment, and the largest control-plane size
// preset it allows (a staging cloud asking for xlarge gets the cap).
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:categories=crossplane
type CloudSettings struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Environment of the variant.
	Environment Environment `json:"environment"`

	// MaxSize caps the size preset of the clouds (small, medium, large,
	// xlarge); empty means no cap.
	// +kubebuilder:validation:Enum=small;medium;large;xlarge
	// +optional
	MaxSize string `json:"maxSize,omitempty"`

	// MaxQuotas caps what the variant's clouds may ask for in spec.quotas
	// and spec.storage.ceph.volumePool.quotaGB: a claim that asks for more,
	// or for unlimited (-1; quotaGB 0 on a dedicated storage pool), where
	// a cap is set is refused, naming the field and the cap. A quota the
	// claim leaves unset keeps the service's default, which the operator
	// configures. No caps when unset.
	// +optional
	MaxQuotas *QuotaCaps `json:"maxQuotas,omitempty"`

	// SecretNamespace is where the management cluster keeps the clouds'
	// credentials (the CephX client keys and the admin clouds.yaml that
	// the provider's ProviderConfigs read); crossplane-system when empty.
	// +optional
	SecretNamespace string `json:"secretNamespace,omitempty"`

	// EndpointDomain is the DNS domain of the clouds' public endpoints:
	// a cloud's Keystone is https://keystone.<composite name>.<domain>, and
	// the provider logs in with the cloud's admin credential there only
	// (its ProviderConfig's spec.authURL), whatever auth_url the admin
	// clouds.yaml that the cloud's control plane writes says. Without it
	// the ControlPlane keeps the operator's default endpoints and the
	// provider goes where that clouds.yaml says: a compromised control
	// plane could then collect the cloud's admin password.
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +optional
	EndpointDomain string `json:"endpointDomain,omitempty"`

	// AdminCACertKey is the key of the cloud's admin credential Secret (the
	// c5c3-operator's k-orc-clouds-yaml, beside clouds.yaml) that holds the
	// CA of the cloud's endpoints, PEM-encoded, as K-ORC reads it. The
	// cloud's ProviderConfig trusts it (caBundleSecretRef) and the tenant's
	// clouds.yaml carries it. cacert when unset; set it to "" when the
	// endpoints' certificates come from a CA the system trusts and the
	// Secret has no such key.
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]*$`
	// +optional
	AdminCACertKey *string `json:"adminCACertKey,omitempty"`
}

// QuotaCaps are the largest quotas a cloud may ask for; an unset field caps
// nothing.
type QuotaCaps struct {
	// +kubebuilder:validation:Minimum=0
	// +optional
	Cores *int64 `json:"cores,omitempty"`
	// +kubebuilder:validation:Minimum=0
	// +optional
	RAMGB *int64 `json:"ramGB,omitempty"`
	// +kubebuilder:validation:Minimum=0
	// +optional
	Instances *int64 `json:"instances,omitempty"`
	// +kubebuilder:validation:Minimum=0
	// +optional
	Gigabytes *int64 `json:"gigabytes,omitempty"`
	// +kubebuilder:validation:Minimum=0
	// +optional
	Volumes *int64 `json:"volumes,omitempty"`
	// +kubebuilder:validation:Minimum=0
	// +optional
	Snapshots *int64 `json:"snapshots,omitempty"`
	// +kubebuilder:validation:Minimum=0
	// +optional
	Networks *int64 `json:"networks,omitempty"`
	// +kubebuilder:validation:Minimum=0
	// +optional
	Ports *int64 `json:"ports,omitempty"`
	// +kubebuilder:validation:Minimum=0
	// +optional
	Routers *int64 `json:"routers,omitempty"`
	// +kubebuilder:validation:Minimum=0
	// +optional
	FloatingIPs *int64 `json:"floatingIPs,omitempty"`
	// VolumePoolGB caps spec.storage.ceph.volumePool.quotaGB, the tenant's
	// Ceph volume pool in each storage pool.
	// +kubebuilder:validation:Minimum=1
	// +optional
	VolumePoolGB *int64 `json:"volumePoolGB,omitempty"`
}

// DefaultAdminCACertKey is where the admin credential's CA is when
// AdminCACertKey is unset.
const DefaultAdminCACertKey = "cacert"

// DefaultSecretNamespace is where credentials are kept when SecretNamespace
// is empty.
const DefaultSecretNamespace = "crossplane-system"

// Default fills every unset field with its default.
func (s *CloudSettings) Default() {
	if s.SecretNamespace == "" {
		s.SecretNamespace = DefaultSecretNamespace
	}
	if s.AdminCACertKey == nil {
		k := DefaultAdminCACertKey
		s.AdminCACertKey = &k
	}
}
