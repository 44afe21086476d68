// Package v1alpha1 holds the consumer API of CobaltCore: the composite resources
// that platform engineers and tenants claim. These Go types are the single
// source of truth for the generated CompositeResourceDefinitions in
// package/xrds; the composition functions decode observed composites into them.
//
// +kubebuilder:object:generate=true
// +groupName=crossplane.c5c3.io
// +versionName=v1alpha1
package v1alpha1
