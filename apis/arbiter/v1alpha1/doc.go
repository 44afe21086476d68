// Package v1alpha1 mirrors the RemoteCluster and RemoteArbiter of the
// external-arbiter-operator (github.com/cobaltcore-dev/external-arbiter-operator,
// pkg/api/arbiter/v1alpha1), for the fields the StorageCluster function sets
// and reads. The Go module proxy does not serve that module, so this is a
// local copy of the shape; make generate derives cluster/crds/arbiter from
// it, so rendered arbiter objects are validated offline against it.
//
// +kubebuilder:object:generate=true
// +groupName=ceph.cobaltcore.sap.com
// +versionName=v1alpha1
package v1alpha1
