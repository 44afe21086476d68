// Package remotekube keeps clients of remote Kubernetes clusters (a pool's,
// the control-plane cluster) for managed resources that write there. Unlike
// package watch it keeps no cache of the cluster's objects: a writer reads
// the one object it owns, when it reconciles.
package remotekube

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/consumer-plane/provider/internal/clients/cache"
	kubeconfigs "github.com/c5c3/consumer-plane/provider/internal/clients/kubeconfig"
)

// DefaultClients is how many clients are kept: one per ProviderConfig and
// credential, and a landscape has a few hundred clusters.
const DefaultClients = 512

// Clients keeps one client per ProviderConfig and credential.
type Clients struct {
	scheme *runtime.Scheme
	cache  *cache.Cache[Remote]
}

// Remote is a client of a remote cluster and the REST config it was made
// from (the cluster's address and CA, for a kubeconfig issued for it).
type Remote struct {
	client.Client
	Config *rest.Config
}

// NewClients returns an empty set of at most size clients of scheme's
// kinds; clients unused for idle are dropped.
func NewClients(scheme *runtime.Scheme, size int, idle time.Duration) *Clients {
	return &Clients{scheme: scheme, cache: cache.New(size, idle, func(Remote) {})}
}

// Credentials are a ProviderConfig's: a kubeconfig from a Secret (or
// another common source), or the provider's own identity.
type Credentials struct {
	Source    xpv2.CredentialsSource
	Selectors xpv2.CommonCredentialSelectors
}

// Connect returns a client of the cluster a ProviderConfig's credentials
// reach. kube reads the credentials; inCluster is the provider's own REST
// config, for InjectedIdentity. A changed kubeconfig (a renewed token) gets
// a client of its own.
func (cs *Clients) Connect(ctx context.Context, kube client.Client, providerConfig string, c Credentials, inCluster *rest.Config) (Remote, error) {
	if c.Source == xpv2.CredentialsSourceInjectedIdentity {
		return cs.cache.Get(providerConfig+"/injected", func() (Remote, error) {
			cl, err := client.New(inCluster, client.Options{Scheme: cs.scheme})
			return Remote{Client: cl, Config: inCluster}, err
		})
	}
	kubeconfig, err := resource.CommonCredentialExtractor(ctx, c.Source, kube, c.Selectors)
	if err != nil {
		return Remote{}, fmt.Errorf("cannot read the kubeconfig of ProviderConfig %q: %w", providerConfig, err)
	}
	sum := sha256.Sum256(kubeconfig)
	return cs.cache.Get(providerConfig+"/"+hex.EncodeToString(sum[:]), func() (Remote, error) {
		cfg, err := kubeconfigs.RESTConfig(kubeconfig, fmt.Sprintf("the kubeconfig of ProviderConfig %q", providerConfig))
		if err != nil {
			return Remote{}, err
		}
		cl, err := client.New(cfg, client.Options{Scheme: cs.scheme})
		return Remote{Client: cl, Config: cfg}, err
	})
}
