package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// UserParameters are the desired properties of a Keystone user.
type UserParameters struct {
	// Name of the user in its domain.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	Name string `json:"name"`

	// DomainID of the user's domain.
	// +kubebuilder:default=default
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.forProvider.domainID is immutable"
	// +optional
	DomainID string `json:"domainID,omitempty"`

	// Description of the user.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	Description string `json:"description,omitempty"`

	// Enabled users can authenticate.
	// +kubebuilder:default=true
	// +optional
	Enabled *bool `json:"enabled,omitempty"`

	// PasswordSecretRef is a Secret key holding the user's password. When
	// it is unset, the provider generates a password when it creates the
	// user and publishes it (key "password") only in the connection secret;
	// if that secret loses it, a new one is set and published.
	// +optional
	PasswordSecretRef *xpv2.SecretKeySelector `json:"passwordSecretRef,omitempty"`
}

// UserObservation is the observed state of a Keystone user.
type UserObservation struct {
	// ID Keystone assigned to the user (also its external name).
	// +optional
	ID string `json:"id,omitempty"`
	// PasswordExpiresAt is when Keystone expires the password, if it does.
	// +optional
	PasswordExpiresAt *metav1.Time `json:"passwordExpiresAt,omitempty"`
}

// UserSpec is the desired state of a User.
type UserSpec struct {
	xpv2.ClusterManagedResourceSpec `json:",inline"`
	ForProvider                     UserParameters `json:"forProvider"`
}

// UserStatus is the observed state of a User.
type UserStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	AtProvider                 UserObservation `json:"atProvider,omitempty"`
}

// User is a Keystone user. Its external name is the ID Keystone assigned;
// an existing user is adopted by name and domain only when this resource's
// own create was interrupted or it only observes. Its connection secret
// holds the user's ID, name, domain and (when generated) password.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories={crossplane,managed,openstack}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="SYNCED",type=string,JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="NAME",type=string,JSONPath=".spec.forProvider.name"
// +kubebuilder:printcolumn:name="EXTERNAL-NAME",type=string,JSONPath=".metadata.annotations.crossplane\\.io/external-name"
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=".metadata.creationTimestamp"
type User struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   UserSpec   `json:"spec"`
	Status UserStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// UserList is a list of User.
type UserList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []User `json:"items"`
}

// Connection secret keys of a User.
const (
	ConnectionSecretKeyUserID   = "user_id"
	ConnectionSecretKeyUserName = "username"
	ConnectionSecretKeyDomainID = "user_domain_id"
	ConnectionSecretKeyPassword = "password"
)
