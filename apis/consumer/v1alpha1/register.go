package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

// Package type metadata.
const (
	Group   = "crossplane.c5c3.io"
	Version = "v1alpha1"
)

// DocsGroup serves the tenant's cloud as the C5C3 docs write it:
// apiVersion c5c3.io/v1alpha1, kind OpenStackCluster. Its composite is
// XOpenStackCluster of the same schema, composed by the same function; the
// pool and control-plane kinds are served in Group only, as the docs write
// them (see Composites).
const DocsGroup = "c5c3.io"

var (
	// DocsGroupVersion is the group version of the docs' OpenStackCluster.
	DocsGroupVersion = schema.GroupVersion{Group: DocsGroup, Version: Version}

	// SchemeGroupVersion is the group version of the consumer API.
	SchemeGroupVersion = schema.GroupVersion{Group: Group, Version: Version}

	// SchemeBuilder registers the consumer API types with a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: SchemeGroupVersion}

	// AddToScheme adds the consumer API types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// Kinds of the consumer API's composites.
const (
	XControlPlaneClusterKind = "XControlPlaneCluster"
	XHypervisorClusterKind   = "XHypervisorCluster"
	XStorageClusterKind      = "XStorageCluster"
	XOpenStackClusterKind    = "XOpenStackCluster"
)

func init() {
	SchemeBuilder.Register(
		&XControlPlaneCluster{}, &XControlPlaneClusterList{},
		&XHypervisorCluster{}, &XHypervisorClusterList{},
		&XStorageCluster{}, &XStorageClusterList{},
		&XOpenStackCluster{}, &XOpenStackClusterList{},
	)
}
