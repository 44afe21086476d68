package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ApplicationCredentialParameters are the desired properties of a Keystone
// application credential. Keystone lets only the user itself create one:
// the provider authenticates as the user, with the password in
// passwordSecretRef, scoped to the project.
// +kubebuilder:validation:XValidation:rule="has(self.userID) || has(self.userIDRef) || has(self.userIDSelector)",message="spec.forProvider must name the user (userID, userIDRef or userIDSelector)"
// +kubebuilder:validation:XValidation:rule="has(self.projectID) || has(self.projectIDRef) || has(self.projectIDSelector)",message="spec.forProvider must name the project (projectID, projectIDRef or projectIDSelector)"
type ApplicationCredentialParameters struct {
	// Name of the credential among the user's; a rotation is appended.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=200
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.forProvider.name is immutable"
	Name string `json:"name"`

	// Description of the credential.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	Description string `json:"description,omitempty"`

	UserIDReference `json:",inline"`

	// ProjectID the credential is scoped to; the user must hold the roles
	// there.
	ProjectIDReference `json:",inline"`

	// PasswordSecretRef is the Secret key with the user's password (a
	// User's connection secret, key "password").
	PasswordSecretRef xpv2.SecretKeySelector `json:"passwordSecretRef"`

	// Roles (names) the credential carries, a subset of the user's roles on
	// the project; empty carries them all. The credential is never
	// unrestricted: it cannot create or delete other credentials or trusts.
	// +kubebuilder:validation:MaxItems=16
	// +listType=set
	// +optional
	Roles []string `json:"roles,omitempty"`

	// ExpiresAt is when Keystone stops accepting the credential; never when
	// unset.
	// +optional
	ExpiresAt *metav1.Time `json:"expiresAt,omitempty"`

	// Rotation: a new value replaces the credential with a new one (a new
	// secret, published to the connection secret), then deletes the old.
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +optional
	Rotation string `json:"rotation,omitempty"`

	// Cloud says how the connection secret's clouds.yaml names and reaches
	// the cloud.
	// +kubebuilder:default={}
	// +optional
	Cloud CloudsYAML `json:"cloud"`
}

// CloudsYAML is the entry of the clouds.yaml the connection secret holds.
type CloudsYAML struct {
	// Name of the cloud in clouds.yaml (openstack --os-cloud NAME).
	// +kubebuilder:default=openstack
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Name string `json:"name,omitempty"`

	// AuthURL is Keystone's URL as the credential's users reach it; the
	// ProviderConfig's when empty.
	// +kubebuilder:validation:MaxLength=2048
	// +optional
	AuthURL string `json:"authURL,omitempty"`

	// Region of the cloud; the ProviderConfig's when empty.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	Region string `json:"region,omitempty"`
}

// ApplicationCredentialObservation is the observed state of an application
// credential (never its secret).
type ApplicationCredentialObservation struct {
	// ID of the credential (also its external name).
	// +optional
	ID string `json:"id,omitempty"`
	// Name of the credential in Keystone.
	// +optional
	Name string `json:"name,omitempty"`
	// ProjectID the credential is scoped to.
	// +optional
	ProjectID string `json:"projectID,omitempty"`
	// Roles the credential carries.
	// +optional
	Roles []string `json:"roles,omitempty"`
	// ExpiresAt is when the credential expires.
	// +optional
	ExpiresAt *metav1.Time `json:"expiresAt,omitempty"`
}

// ApplicationCredentialSpec is the desired state of an ApplicationCredential.
type ApplicationCredentialSpec struct {
	xpv2.ClusterManagedResourceSpec `json:",inline"`
	ForProvider                     ApplicationCredentialParameters `json:"forProvider"`
}

// ApplicationCredentialStatus is the observed state of an
// ApplicationCredential.
type ApplicationCredentialStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	AtProvider                 ApplicationCredentialObservation `json:"atProvider,omitempty"`
}

// ApplicationCredential is a Keystone application credential of a user. Its
// external name is the ID Keystone assigned. Keystone shows the secret only
// once, when it creates the credential: it goes to the connection secret
// (clouds.yaml, application_credential_id, application_credential_secret,
// auth_url, region_name) and nowhere else. A credential whose create was
// interrupted before its ID was recorded is deleted and made again, since
// its secret is lost.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories={crossplane,managed,openstack}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="SYNCED",type=string,JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="NAME",type=string,JSONPath=".status.atProvider.name"
// +kubebuilder:printcolumn:name="EXPIRES",type=string,JSONPath=".status.atProvider.expiresAt"
// +kubebuilder:printcolumn:name="EXTERNAL-NAME",type=string,JSONPath=".metadata.annotations.crossplane\\.io/external-name",priority=1
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=".metadata.creationTimestamp"
type ApplicationCredential struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ApplicationCredentialSpec   `json:"spec"`
	Status ApplicationCredentialStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ApplicationCredentialList is a list of ApplicationCredential.
type ApplicationCredentialList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ApplicationCredential `json:"items"`
}

// Connection secret keys of an ApplicationCredential.
const (
	ConnectionSecretKeyCloudsYAML = "clouds.yaml"
	ConnectionSecretKeyAppCredID  = "application_credential_id"
	ConnectionSecretKeyAppCredKey = "application_credential_secret"
	ConnectionSecretKeyAuthURL    = "auth_url"
	ConnectionSecretKeyRegion     = "region_name"
	ConnectionSecretKeyCACert     = "cacert"
)

// KeystoneName is the credential's name in Keystone: the name, and the
// rotation when there is one.
func (p ApplicationCredentialParameters) KeystoneName() string {
	if p.Rotation == "" {
		return p.Name
	}
	return p.Name + "-" + p.Rotation
}
