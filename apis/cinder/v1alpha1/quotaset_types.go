package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	keystonev1alpha1 "github.com/c5c3/consumer-plane/apis/keystone/v1alpha1"
)

// QuotaSetParameters are the desired properties of a QuotaSet.
// +kubebuilder:validation:XValidation:rule="has(self.projectID) || has(self.projectIDRef) || has(self.projectIDSelector)",message="spec.forProvider needs projectID, projectIDRef or projectIDSelector"
type QuotaSetParameters struct {
	// The project whose quotas these are.
	keystonev1alpha1.ProjectIDReference `json:",inline"`

	// Gigabytes caps volume and snapshot gigabytes; -1 is unlimited.
	// +kubebuilder:validation:Minimum=-1
	// +optional
	Gigabytes *int64 `json:"gigabytes,omitempty"`

	// Volumes caps volumes; -1 is unlimited.
	// +kubebuilder:validation:Minimum=-1
	// +optional
	Volumes *int64 `json:"volumes,omitempty"`

	// Snapshots caps snapshots; -1 is unlimited.
	// +kubebuilder:validation:Minimum=-1
	// +optional
	Snapshots *int64 `json:"snapshots,omitempty"`

	// Backups caps backups; -1 is unlimited.
	// +kubebuilder:validation:Minimum=-1
	// +optional
	Backups *int64 `json:"backups,omitempty"`
}

// QuotaSetObservation is the observed state of a QuotaSet.
type QuotaSetObservation struct {
	// ProjectID the quotas apply to.
	// +optional
	ProjectID string `json:"projectID,omitempty"`
}

// QuotaSetSpec is the desired state of a QuotaSet.
type QuotaSetSpec struct {
	xpv2.ClusterManagedResourceSpec `json:",inline"`
	ForProvider                     QuotaSetParameters `json:"forProvider"`
}

// QuotaSetStatus is the observed state of a QuotaSet.
type QuotaSetStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	AtProvider                 QuotaSetObservation `json:"atProvider,omitempty"`
}

// QuotaSet is the Cinder block-storage quota of a project. Deleting it resets
// the project to the cloud's defaults.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories={crossplane,managed,openstack}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="SYNCED",type=string,JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="PROJECT",type=string,JSONPath=".status.atProvider.projectID"
// +kubebuilder:printcolumn:name="EXTERNAL-NAME",type=string,JSONPath=".metadata.annotations.crossplane\\.io/external-name"
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=".metadata.creationTimestamp"
type QuotaSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   QuotaSetSpec   `json:"spec"`
	Status QuotaSetStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// QuotaSetList is a list of QuotaSet.
type QuotaSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []QuotaSet `json:"items"`
}
