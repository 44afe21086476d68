// Package v1alpha1 holds the provider's managed resources for objects in
// other Kubernetes clusters that must not pass through a Crossplane object:
// a SecretCopy copies keys of a Secret of the management cluster (a
// connection secret: a CephX key, a kubeconfig) into a Secret of a remote
// cluster. provider-kubernetes can copy a field with patchesFrom, but it
// writes the copied value into its Object's spec and into the remote
// object's last-applied annotation, which its status returns: every reader
// of Objects and every function request would see the key.
//
// +kubebuilder:object:generate=true
// +groupName=kubernetes.provider.c5c3.io
// +versionName=v1alpha1
package v1alpha1
