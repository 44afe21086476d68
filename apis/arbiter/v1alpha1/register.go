package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

// Group and version of the external-arbiter-operator's API.
const (
	Group   = "ceph.cobaltcore.sap.com"
	Version = "v1alpha1"
)

var (
	// SchemeGroupVersion is the group version of these types.
	SchemeGroupVersion = schema.GroupVersion{Group: Group, Version: Version}

	// SchemeBuilder registers the types with a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: SchemeGroupVersion}

	// AddToScheme adds the types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func init() {
	SchemeBuilder.Register(&RemoteCluster{}, &RemoteClusterList{}, &RemoteArbiter{}, &RemoteArbiterList{})
}
