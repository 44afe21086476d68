package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ConnectionSecretKeyKubeconfig is the key of the kubeconfig in the connection
// Secret, which provider-kubernetes ProviderConfigs reference.
const ConnectionSecretKeyKubeconfig = "kubeconfig"

// ShootReference names a Gardener Shoot.
type ShootReference struct {
	// Name of the Shoot.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// Namespace is the Gardener project namespace of the Shoot.
	// +kubebuilder:validation:MinLength=1
	Namespace string `json:"namespace"`
}

// ServiceAccountReference names a ServiceAccount in a Shoot's cluster.
type ServiceAccountReference struct {
	// Namespace of the ServiceAccount.
	// +kubebuilder:validation:MinLength=1
	Namespace string `json:"namespace"`
	// Name of the ServiceAccount.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}

// ShootKubeconfigParameters say which Shoot to reach and for how long each
// credential lives. Optional numbers are pointers: composition functions
// serialise typed objects with go-json-experiment, whose omitempty keeps
// zero numbers, which would override the defaults.
// +kubebuilder:validation:XValidation:rule="self.renewBeforeSeconds < self.expirationSeconds",message="spec.forProvider.renewBeforeSeconds must be less than spec.forProvider.expirationSeconds"
type ShootKubeconfigParameters struct {
	// ShootRef names the Shoot.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.forProvider.shootRef is immutable"
	ShootRef ShootReference `json:"shootRef"`

	// ExpirationSeconds is the lifetime Gardener gives each admin kubeconfig
	// (shoots/adminkubeconfig); Gardener caps it at 24 hours by default.
	// +kubebuilder:default=86400
	// +kubebuilder:validation:Minimum=600
	// +kubebuilder:validation:Maximum=86400
	// +optional
	ExpirationSeconds *int64 `json:"expirationSeconds,omitempty"`

	// RenewBeforeSeconds: a new kubeconfig is requested this long before the
	// current one expires, so consumers never hold an expired one.
	// +kubebuilder:default=21600
	// +kubebuilder:validation:Minimum=60
	// +optional
	RenewBeforeSeconds *int64 `json:"renewBeforeSeconds,omitempty"`

	// ServiceAccountRef, when set, makes the kubeconfig log in as this
	// ServiceAccount of the Shoot's cluster instead of as Gardener's admin:
	// for a consumer that needs part of the cluster, whose Role there says
	// which. The token comes from the ServiceAccount's TokenRequest API and
	// lives expirationSeconds (the Shoot's kube-apiserver may shorten it);
	// the admin kubeconfig the provider requests it with is kept nowhere.
	// Changing it issues a kubeconfig of the new identity.
	// +optional
	ServiceAccountRef *ServiceAccountReference `json:"serviceAccountRef,omitempty"`
}

// ShootKubeconfigObservation is what the provider last issued.
type ShootKubeconfigObservation struct {
	// Server is the Shoot's API server URL in the kubeconfig.
	// +optional
	Server string `json:"server,omitempty"`
	// IssuedAt is when the current kubeconfig was issued.
	// +optional
	IssuedAt *metav1.Time `json:"issuedAt,omitempty"`
	// ExpiresAt is when the current kubeconfig expires.
	// +optional
	ExpiresAt *metav1.Time `json:"expiresAt,omitempty"`
}

// ShootKubeconfigSpec is the desired state of a ShootKubeconfig.
// +kubebuilder:validation:XValidation:rule="has(self.writeConnectionSecretToRef)",message="spec.writeConnectionSecretToRef is required: the kubeconfig is written to that Secret"
type ShootKubeconfigSpec struct {
	xpv2.ClusterManagedResourceSpec `json:",inline"`
	ForProvider                     ShootKubeconfigParameters `json:"forProvider"`
}

// ShootKubeconfigStatus is the observed state of a ShootKubeconfig.
type ShootKubeconfigStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	AtProvider                 ShootKubeconfigObservation `json:"atProvider,omitempty"`
}

// A ShootKubeconfig keeps a Secret holding a fresh kubeconfig of a Gardener
// Shoot. Gardener issues no static kubeconfig; the provider requests a
// short-lived admin one through the shoots/adminkubeconfig subresource (or,
// with spec.forProvider.serviceAccountRef, a token of a ServiceAccount of
// the Shoot's cluster), writes it to spec.writeConnectionSecretToRef under
// the key "kubeconfig", and requests a new one before it expires.
// provider-kubernetes ProviderConfigs reference that Secret to place objects
// in the Shoot.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories={crossplane,managed,cobaltcore}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="SYNCED",type=string,JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="SHOOT",type=string,JSONPath=".spec.forProvider.shootRef.name"
// +kubebuilder:printcolumn:name="SERVICE-ACCOUNT",type=string,JSONPath=".spec.forProvider.serviceAccountRef.name",priority=1
// +kubebuilder:printcolumn:name="EXPIRES",type=date,JSONPath=".status.atProvider.expiresAt"
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=".metadata.creationTimestamp"
type ShootKubeconfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ShootKubeconfigSpec   `json:"spec"`
	Status ShootKubeconfigStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ShootKubeconfigList is a list of ShootKubeconfig.
type ShootKubeconfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ShootKubeconfig `json:"items"`
}
