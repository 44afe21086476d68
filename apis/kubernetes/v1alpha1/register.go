package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

// Package type metadata.
const (
	Group   = "kubernetes.provider.c5c3.io"
	Version = "v1alpha1"
)

var (
	// SchemeGroupVersion is the group version of the provider's resources
	// in remote Kubernetes clusters.
	SchemeGroupVersion = schema.GroupVersion{Group: Group, Version: Version}

	// SchemeBuilder registers the types with a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: SchemeGroupVersion}

	// AddToScheme adds the types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// Kinds of the group's managed resources.
const (
	SecretCopyKind    = "SecretCopy"
	NodeLabelKind     = "NodeLabel"
	ClusterAccessKind = "ClusterAccess"
	StorageReportKind = "StorageReport"
)

func init() {
	SchemeBuilder.Register(&SecretCopy{}, &SecretCopyList{}, &NodeLabel{}, &NodeLabelList{}, &ClusterAccess{}, &ClusterAccessList{}, &StorageReport{}, &StorageReportList{}, &ProviderConfig{}, &ProviderConfigList{}, &ProviderConfigUsage{}, &ProviderConfigUsageList{})
}
