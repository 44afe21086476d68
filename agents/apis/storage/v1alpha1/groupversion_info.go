// Package v1alpha1 is the storage.c5c3.io API: what the storage agent
// publishes about the Ceph cluster of a storage pool.
// +kubebuilder:object:generate=true
// +groupName=storage.c5c3.io
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is storage.c5c3.io/v1alpha1.
	GroupVersion = schema.GroupVersion{Group: "storage.c5c3.io", Version: "v1alpha1"}
	// SchemeBuilder registers the types.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}
	// AddToScheme adds the types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
