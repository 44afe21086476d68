package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// UserIDReference names a Keystone user by ID, or resolves the ID from a
// User managed resource.
type UserIDReference struct {
	// UserID of the Keystone user.
	// +optional
	UserID string `json:"userID,omitempty"`

	// UserIDRef resolves UserID from a keystone.provider.c5c3.io User, again
	// at every reconcile: UserID follows the User it names (unless the
	// reference's resolution policy is Optional).
	// +optional
	UserIDRef *xpv2.Reference `json:"userIDRef,omitempty"`

	// UserIDSelector selects a User to resolve UserID from.
	// +optional
	UserIDSelector *xpv2.Selector `json:"userIDSelector,omitempty"`
}

// RoleAssignmentParameters grant a role to a user or a group on a project or
// a domain. A changed grant replaces the old one (the old is revoked first).
// +kubebuilder:validation:XValidation:rule="(has(self.userID) || has(self.userIDRef) || has(self.userIDSelector)) != has(self.groupID)",message="spec.forProvider must name a user (userID, userIDRef or userIDSelector) or a groupID, not both"
// +kubebuilder:validation:XValidation:rule="(has(self.projectID) || has(self.projectIDRef) || has(self.projectIDSelector)) != has(self.domainID)",message="spec.forProvider must name a project (projectID, projectIDRef or projectIDSelector) or a domainID, not both"
type RoleAssignmentParameters struct {
	// Role is the name of the Keystone role granted (for example member or
	// reader).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	Role string `json:"role"`

	// RoleDomainID is the domain of a domain-specific role; empty for the
	// global roles.
	// +optional
	RoleDomainID string `json:"roleDomainID,omitempty"`

	UserIDReference `json:",inline"`

	// GroupID of the Keystone group the role is granted to.
	// +optional
	GroupID string `json:"groupID,omitempty"`

	ProjectIDReference `json:",inline"`

	// DomainID of the domain the role is granted on.
	// +optional
	DomainID string `json:"domainID,omitempty"`
}

// RoleAssignmentObservation is the observed state of a role assignment.
type RoleAssignmentObservation struct {
	// RoleID of the granted role.
	// +optional
	RoleID string `json:"roleID,omitempty"`
}

// RoleAssignmentSpec is the desired state of a RoleAssignment.
type RoleAssignmentSpec struct {
	xpv2.ClusterManagedResourceSpec `json:",inline"`
	ForProvider                     RoleAssignmentParameters `json:"forProvider"`
}

// RoleAssignmentStatus is the observed state of a RoleAssignment.
type RoleAssignmentStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	AtProvider                 RoleAssignmentObservation `json:"atProvider,omitempty"`
}

// RoleAssignment is a Keystone role granted to a user or group on a project
// or domain. Keystone gives a grant no ID: its external name is
// <scope>/<scope ID>/<actor>/<actor ID>/<role ID>, and granting is
// idempotent, so an interrupted create leaves nothing to duplicate. A grant
// removed behind the provider's back is granted again.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories={crossplane,managed,openstack}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="SYNCED",type=string,JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="ROLE",type=string,JSONPath=".spec.forProvider.role"
// +kubebuilder:printcolumn:name="EXTERNAL-NAME",type=string,JSONPath=".metadata.annotations.crossplane\\.io/external-name",priority=1
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=".metadata.creationTimestamp"
type RoleAssignment struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   RoleAssignmentSpec   `json:"spec"`
	Status RoleAssignmentStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// RoleAssignmentList is a list of RoleAssignment.
type RoleAssignmentList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []RoleAssignment `json:"items"`
}
