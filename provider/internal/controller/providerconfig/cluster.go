package providerconfig

import (
	"context"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/consumer-plane/provider/internal/clients/remotekube"
	"github.com/c5c3/consumer-plane/provider/internal/clients/watch"
)

// A ClusterProviderConfig reaches a Kubernetes cluster (the ironcore and
// kvm groups' ProviderConfigs).
type ClusterProviderConfig interface {
	client.Object
	ClusterCredentials() (xpv2.CredentialsSource, xpv2.CommonCredentialSelectors)
}

// ClusterView is the Connector of a kind that views a remote Kubernetes
// cluster's objects (a ServerInventory, a HypervisorInventory): it tracks
// the view's use of its ProviderConfig (newPC: an empty one of the group
// and its usage), reads it and hands the watched cluster its credentials
// reach to external. A deleted view gets a nil cluster: it has nothing to
// delete, and goes without reaching a cluster that may be gone with it (a
// pool's Shoot is deleted alongside its inventory).
func ClusterView[T resource.LegacyManaged, PC ClusterProviderConfig](mgr ctrl.Manager, watched *watch.Clusters,
	newPC func() (PC, resource.LegacyProviderConfigUsage), external func(*watch.Cluster) managed.TypedExternalClient[T],
) Connector[T, *watch.Cluster] {
	kube, inCluster := mgr.GetClient(), mgr.GetConfig() // the provider's own, for InjectedIdentity
	return Connector[T, *watch.Cluster]{
		Client: func(ctx context.Context, mg resource.LegacyManaged) (*watch.Cluster, error) {
			if meta.WasDeleted(mg) {
				return nil, nil //nolint:nilnil // nil is the deleted view's cluster, see above.
			}
			pc, usage := newPC()
			if err := Get(ctx, kube, mg, usage, pc); err != nil {
				return nil, err
			}
			source, selectors := pc.ClusterCredentials()
			return watched.Connect(ctx, kube, pc.GetName(), watch.Credentials{Source: source, Selectors: selectors}, inCluster)
		},
		External: external,
	}
}

// RemoteCluster is the Client of a Connector whose kind writes a remote
// Kubernetes cluster's objects (a SecretCopy, a NodeLabel, a ClusterAccess):
// it tracks the resource's use of its ProviderConfig (newPC: an empty one of
// the group and its usage), reads it and returns a client of the cluster its
// credentials reach, with the cluster's REST config (for a kind that issues
// credentials of it).
func RemoteCluster[PC ClusterProviderConfig](mgr ctrl.Manager, clients *remotekube.Clients, newPC func() (PC, resource.LegacyProviderConfigUsage)) func(context.Context, resource.LegacyManaged) (remotekube.Remote, error) {
	kube, inCluster := mgr.GetClient(), mgr.GetConfig() // the provider's own, for InjectedIdentity
	return func(ctx context.Context, mg resource.LegacyManaged) (remotekube.Remote, error) {
		pc, usage := newPC()
		if err := Get(ctx, kube, mg, usage, pc); err != nil {
			return remotekube.Remote{}, err
		}
		source, selectors := pc.ClusterCredentials()
		return clients.Connect(ctx, kube, pc.GetName(), remotekube.Credentials{Source: source, Selectors: selectors}, inCluster)
	}
}
