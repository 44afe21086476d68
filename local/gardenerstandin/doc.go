// Package gardenerstandin does gardenlet's part for the Shoots of a local
// garden, whose API is the real gardener-apiserver (local/garden):
// every Shoot gets a cluster of its own (Clusters: a local kube-apiserver),
// and once it serves, Publish puts into the garden what gardenlet publishes
// (the cluster's CA, its client CA, its advertised address) and reports the
// Shoot created and healthy. The real shoots/adminkubeconfig subresource then
// issues kubeconfigs that log into that cluster.
//
// What it does not simulate: Seeds, extensions, machines and nodes (a
// Shoot's cluster has none, so nothing scheduled there runs), reconciliation
// of changes, hibernation, and deletion flows (Gardener deletes a Shoot at
// once when no gardenlet holds its finalizer).
package gardenerstandin
