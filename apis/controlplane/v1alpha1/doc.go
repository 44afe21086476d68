// Package v1alpha1 mirrors the c5c3-operator's ControlPlane (c5c3.io/v1alpha1)
// as the real operator ships it, for the fields the OpenStackCluster function
// sets and reads. The operator's Go module cannot be imported (it replaces
// its own sibling modules with local paths), so this is a local copy of the
// shape. make generate derives cluster/crds/c5c3 from it, so rendered
// ControlPlanes are validated offline against the fields the mirror has.
//
// +kubebuilder:object:generate=true
// +groupName=c5c3.io
// +versionName=v1alpha1
package v1alpha1
