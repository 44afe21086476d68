// Package kubernetes holds what the kubernetes.provider.c5c3.io controllers
// (SecretCopy, NodeLabel, ClusterAccess) share: how they reach the remote
// cluster of a resource's ProviderConfig.
package kubernetes

import (
	"context"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/c5c3/consumer-plane/apis/kubernetes/v1alpha1"
	"github.com/c5c3/consumer-plane/provider/internal/clients/remotekube"
	"github.com/c5c3/consumer-plane/provider/internal/controller/providerconfig"
)

// Remote returns, for a resource of the group, a client of the cluster its
// ProviderConfig's credentials reach, with that cluster's REST config; it
// tracks the resource's use of the ProviderConfig.
func Remote(mgr ctrl.Manager, clients *remotekube.Clients) func(context.Context, resource.LegacyManaged) (remotekube.Remote, error) {
	return providerconfig.RemoteCluster(mgr, clients, NewProviderConfig)
}

// NewProviderConfig is an empty ProviderConfig of the group and its usage.
func NewProviderConfig() (*v1alpha1.ProviderConfig, resource.LegacyProviderConfigUsage) {
	return &v1alpha1.ProviderConfig{}, &v1alpha1.ProviderConfigUsage{}
}

// RemoteOrGone is Remote for a kind whose remote objects go with their
// cluster: a resource being deleted whose cluster cannot be reached (a
// pool's Shoot and its kubeconfig Secret go first) gets nil, which its
// external client takes for a cluster that is gone.
func RemoteOrGone(mgr ctrl.Manager, clients *remotekube.Clients) func(context.Context, resource.LegacyManaged) (*remotekube.Remote, error) {
	connect := Remote(mgr, clients)
	return func(ctx context.Context, mg resource.LegacyManaged) (*remotekube.Remote, error) {
		r, err := connect(ctx, mg)
		if err != nil && meta.WasDeleted(mg) {
			return nil, nil //nolint:nilnil // nil is the gone cluster
		}
		return &r, err
	}
}
