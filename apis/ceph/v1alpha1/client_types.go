package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Keys of a Client's connection secret.
const (
	ConnectionSecretKeyKey     = "key"
	ConnectionSecretKeyEntity  = "entity"
	ConnectionSecretKeyMonHost = "mon_host"
)

// ClientParameters are the desired properties of a Client.
type ClientParameters struct {
	// Entity is the CephX user without "client.".
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_.-]+$`
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.forProvider.entity is immutable"
	Entity string `json:"entity"`

	// Caps per daemon type (mon, mgr, osd, mds), as ceph auth caps takes
	// them, for example osd: "profile rbd pool=volumes".
	// +kubebuilder:validation:MinProperties=1
	// +kubebuilder:validation:XValidation:rule="self.all(k, k in ['mon', 'mgr', 'osd', 'mds'])",message="spec.forProvider.caps keys must be mon, mgr, osd or mds"
	Caps map[string]string `json:"caps"`

	// RotateKey: a new value (any string, such as a date) mints a new key;
	// the connection secret is updated with it.
	// +optional
	RotateKey string `json:"rotateKey,omitempty"`
}

// ClientObservation is the observed state of a Client.
type ClientObservation struct {
	// KeyRotated is the RotateKey value of the current key.
	// +optional
	KeyRotated string `json:"keyRotated,omitempty"`
}

// ClientSpec is the desired state of a Client.
type ClientSpec struct {
	xpv2.ClusterManagedResourceSpec `json:",inline"`
	ForProvider                     ClientParameters `json:"forProvider"`
}

// ClientStatus is the observed state of a Client.
type ClientStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	AtProvider                 ClientObservation `json:"atProvider,omitempty"`
}

// Client is a CephX client with caps. Its key is published only in the
// connection secret (keys: key, entity, mon_host), never in status.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories={crossplane,managed,ceph}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="SYNCED",type=string,JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="ENTITY",type=string,JSONPath=".spec.forProvider.entity"
// +kubebuilder:printcolumn:name="EXTERNAL-NAME",type=string,JSONPath=".metadata.annotations.crossplane\\.io/external-name"
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=".metadata.creationTimestamp"
type Client struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ClientSpec   `json:"spec"`
	Status ClientStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ClientList is a list of Client.
type ClientList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Client `json:"items"`
}
