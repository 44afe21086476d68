// Package ironcore watches the metal-operator Servers of IronCore metal
// clusters. It only reads: the provider never claims, powers or labels a
// Server.
package ironcore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	metalv1alpha1 "github.com/ironcore-dev/metal-operator/api/v1alpha1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/c5c3/consumer-plane/provider/internal/clients/cache"
)

// syncTimeout bounds the first list of a metal cluster's Servers: past it
// the credentials most likely may not list them, and the reconcile says so
// instead of waiting.
const syncTimeout = 30 * time.Second

var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = metalv1alpha1.AddToScheme(s) //nolint:errcheck // registering known types cannot fail.
	return s
}()

// A Cluster is a watched, in-memory view of one metal cluster's Servers.
type Cluster struct {
	cache  crcache.Cache
	cancel context.CancelFunc
}

// Servers lists the Servers carrying every one of the labels, by name, from
// the watch cache: no request reaches the metal cluster. (The cache's order
// is random; a stable one keeps statuses from changing for nothing.)
func (c *Cluster) Servers(ctx context.Context, labels map[string]string) ([]metalv1alpha1.Server, error) {
	l := &metalv1alpha1.ServerList{}
	if err := c.cache.List(ctx, l, client.MatchingLabels(labels)); err != nil {
		return nil, fmt.Errorf("cannot list Servers: %w", err)
	}
	slices.SortFunc(l.Items, func(a, b metalv1alpha1.Server) int { return strings.Compare(a.Name, b.Name) })
	return l.Items, nil
}

// Clusters keeps one watched Cluster per ProviderConfig and credential, and
// sends the ProviderConfig's name to Changes whenever one of its Servers is
// added, changed or deleted, so the inventories that read it are observed
// again within seconds instead of at the next poll.
type Clusters struct {
	cache   *cache.Cache[*Cluster]
	changes chan event.TypedGenericEvent[string]
}

// NewClusters returns an empty set of watched clusters. Watches unused for
// idle are stopped.
func NewClusters(idle time.Duration) *Clusters {
	return &Clusters{
		cache:   cache.New(16, idle, func(c *Cluster) { c.cancel() }),
		changes: make(chan event.TypedGenericEvent[string], 1024),
	}
}

// Changes names the ProviderConfig of every Server change. Someone must
// read it (the ServerInventory controller does): a full channel holds up
// the watches.
func (cs *Clusters) Changes() <-chan event.TypedGenericEvent[string] { return cs.changes }

// ForKubeconfig returns the watched Cluster of a ProviderConfig whose
// credentials are a kubeconfig.
func (cs *Clusters) ForKubeconfig(providerConfig string, kubeconfig []byte) (*Cluster, error) {
	sum := sha256.Sum256(kubeconfig)
	return cs.cache.Get(providerConfig+"/"+hex.EncodeToString(sum[:]), func() (*Cluster, error) {
		cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("the metal cluster kubeconfig is not valid: %w", err)
		}
		return cs.watch(providerConfig, cfg)
	})
}

// ForConfig returns the watched Cluster of a ProviderConfig that uses the
// provider's own identity.
func (cs *Clusters) ForConfig(providerConfig string, cfg *rest.Config) (*Cluster, error) {
	return cs.cache.Get(providerConfig+"/injected", func() (*Cluster, error) { return cs.watch(providerConfig, cfg) })
}

// watch starts a watch of the Servers of cfg's cluster and waits for its
// first list. The watch outlives the reconcile that started it; it stops
// when the Cluster is dropped from the cache.
func (cs *Clusters) watch(providerConfig string, cfg *rest.Config) (*Cluster, error) {
	c, err := crcache.New(cfg, crcache.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("cannot reach the metal cluster: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	inf, err := c.GetInformer(ctx, &metalv1alpha1.Server{}, crcache.BlockUntilSynced(false))
	if err != nil {
		cancel()
		return nil, fmt.Errorf("cannot watch Servers of the metal cluster (are the metal-operator CRDs installed?): %w", err)
	}
	notify := func(any) { cs.changes <- event.TypedGenericEvent[string]{Object: providerConfig} }
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    notify,
		UpdateFunc: func(_, o any) { notify(o) },
		DeleteFunc: notify,
	}); err != nil {
		cancel()
		return nil, err
	}
	go func() { _ = c.Start(ctx) }() //nolint:errcheck // Start only fails when the context ends.
	syncCtx, done := context.WithTimeout(ctx, syncTimeout)
	defer done()
	if !c.WaitForCacheSync(syncCtx) {
		cancel()
		return nil, fmt.Errorf("cannot list the Servers of the metal cluster within %s: the credentials need get, list and watch on servers.metal.ironcore.dev", syncTimeout)
	}
	return &Cluster{cache: c, cancel: cancel}, nil
}
