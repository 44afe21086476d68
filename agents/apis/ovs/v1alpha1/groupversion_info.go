// Package v1alpha1 is the ovs.c5c3.io API: what the OVS agent publishes about
// each node's Open vSwitch and its ovn-controller settings.
// +kubebuilder:object:generate=true
// +groupName=ovs.c5c3.io
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is ovs.c5c3.io/v1alpha1.
	GroupVersion = schema.GroupVersion{Group: "ovs.c5c3.io", Version: "v1alpha1"}
	// SchemeBuilder registers the types.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}
	// AddToScheme adds the types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
