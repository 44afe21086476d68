// Package watch keeps watched, in-memory views of one kind of object in
// other clusters — the metal cluster's Servers, a pool cluster's
// Hypervisors — for managed resources that only observe them. It only
// reads.
//
// One view is kept per ProviderConfig and credential, and shared by every
// managed resource of that ProviderConfig; each change of a watched object
// names the ProviderConfig on Changes, so those managed resources are
// observed again within seconds instead of at the next poll.
package watch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/c5c3/consumer-plane/provider/internal/clients/cache"
	kubeconfigs "github.com/c5c3/consumer-plane/provider/internal/clients/kubeconfig"
)

// syncTimeout bounds the first list of a cluster's objects: past it the
// credentials most likely may not list them, and the reconcile says so
// instead of waiting.
const syncTimeout = 30 * time.Second

// Kind says what is watched.
type Kind struct {
	// Scheme knows Object's type (unstructured objects need none).
	Scheme *runtime.Scheme
	// New returns an empty object of the watched kind; an unstructured one
	// must carry its apiVersion and kind.
	New func() client.Object
	// Cluster names the cluster's role in errors ("the metal cluster").
	Cluster string
	// Objects names the watched objects in errors ("Servers").
	Objects string
	// Permission is the RBAC the credentials need, for the error a sync
	// that times out reports.
	Permission string
	// Changed, when set, says whether an update matters to the managed
	// resources: a node's kubelet updates its node every few minutes, and
	// only a change of its labels is news.
	Changed func(old, updated any) bool
}

// Unstructured is a Kind's New for objects read unstructured: those of
// CRDs whose Go modules the provider does not import (the hypervisor
// operator's Hypervisors, the storage agent's CephStatus).
func Unstructured(gvk schema.GroupVersionKind) func() client.Object {
	return func() client.Object {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		return u
	}
}

// A watch that stops receiving says nothing: a frozen or partitioned API
// server keeps its connection open, and the view would go on serving its
// last state as current. So each watched cluster's API is asked for
// /readyz every probeEvery, each answer awaited for at most probeTimeout;
// after probeMisses unanswered in a row the cluster counts as unreachable
// until it answers again. /readyz is open to every authenticated identity
// (system:public-info-viewer), so the credentials need nothing more.
const (
	probeEvery   = 10 * time.Second
	probeTimeout = 5 * time.Second
	probeMisses  = 2
)

// A Cluster is a watched, in-memory view of one cluster's objects of a Kind.
type Cluster struct {
	cache  crcache.Cache
	cancel context.CancelFunc

	mu          sync.Mutex
	unreachable error // set while the cluster's API does not answer
}

// List lists watched objects from the cache: no request reaches the
// cluster. While the cluster's API does not answer, List fails, saying so,
// instead of passing the last view off as current.
func (c *Cluster) List(ctx context.Context, l client.ObjectList, opts ...client.ListOption) error {
	c.mu.Lock()
	err := c.unreachable
	c.mu.Unlock()
	if err != nil {
		return err
	}
	return c.cache.List(ctx, l, opts...)
}

// probe asks the cluster's API whether it is ready every probeEvery until
// ctx ends, and calls changed when the cluster becomes unreachable or
// answers again, so that its readers look at once.
func (c *Cluster) probe(ctx context.Context, cfg *rest.Config, cluster string, changed func()) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return
	}
	var (
		misses int
		since  time.Time
	)
	tick := time.NewTicker(probeEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		pctx, cancel := context.WithTimeout(ctx, probeTimeout)
		err := dc.RESTClient().Get().AbsPath("/readyz").Do(pctx).Error()
		cancel()
		if ctx.Err() != nil {
			return
		}
		// Any answer but a server error is an API server serving: a
		// landscape may keep /readyz from some identities.
		if err != nil && (kerrors.IsForbidden(err) || kerrors.IsUnauthorized(err) || kerrors.IsNotFound(err)) {
			err = nil
		}
		if err == nil {
			misses = 0
			c.mu.Lock()
			was := c.unreachable
			c.unreachable = nil
			c.mu.Unlock()
			if was != nil {
				changed()
			}
			continue
		}
		if misses == 0 {
			since = time.Now()
		}
		misses++
		if misses < probeMisses {
			continue
		}
		// Said once per outage: a message that changed with every probe
		// would rewrite its readers' status every time.
		c.mu.Lock()
		was := c.unreachable
		if was == nil {
			c.unreachable = fmt.Errorf("the API of %s at %s has not answered since %s (its objects are as last seen): %w",
				cluster, cfg.Host, since.UTC().Format(time.RFC3339), err)
		}
		c.mu.Unlock()
		if was == nil {
			changed()
		}
	}
}

// Clusters keeps one watched Cluster per ProviderConfig and credential.
type Clusters struct {
	kind    Kind
	cache   *cache.Cache[*Cluster]
	changes chan event.TypedGenericEvent[string]
}

// DefaultClusters is how many watched clusters of a kind are kept by
// default: every hypervisor pool is a cluster, and a landscape of 1,000
// clouds has a few hundred pools. Past the size the least recently used
// watch stops and its next reconcile lists that cluster's objects again.
const DefaultClusters = 512

// NewClusters returns an empty set of at most size watched clusters of a
// kind. Watches unused for idle are stopped.
func NewClusters(k Kind, size int, idle time.Duration) *Clusters {
	return &Clusters{
		kind:    k,
		cache:   cache.New(size, idle, func(c *Cluster) { c.cancel() }),
		changes: make(chan event.TypedGenericEvent[string], 1024),
	}
}

// Changes names the ProviderConfig of every change. Someone must read it
// (Source does): a full channel holds up the watches.
func (cs *Clusters) Changes() <-chan event.TypedGenericEvent[string] { return cs.changes }

// ForKubeconfig returns the watched Cluster of a ProviderConfig whose
// credentials are a kubeconfig.
func (cs *Clusters) ForKubeconfig(providerConfig string, kubeconfig []byte) (*Cluster, error) {
	sum := sha256.Sum256(kubeconfig)
	return cs.cache.Get(providerConfig+"/"+hex.EncodeToString(sum[:]), func() (*Cluster, error) {
		cfg, err := kubeconfigs.RESTConfig(kubeconfig, "the kubeconfig of "+cs.kind.Cluster)
		if err != nil {
			return nil, err
		}
		return cs.watch(providerConfig, cfg)
	})
}

// ForConfig returns the watched Cluster of a ProviderConfig that uses the
// provider's own identity.
func (cs *Clusters) ForConfig(providerConfig string, cfg *rest.Config) (*Cluster, error) {
	return cs.cache.Get(providerConfig+"/injected", func() (*Cluster, error) { return cs.watch(providerConfig, cfg) })
}

// Credentials are a ProviderConfig's: a kubeconfig from a Secret (or
// another common source), or the provider's own identity.
type Credentials struct {
	Source    xpv2.CredentialsSource
	Selectors xpv2.CommonCredentialSelectors
}

// Connect returns the watched Cluster a ProviderConfig's credentials reach.
// inCluster is the provider's own REST config, for InjectedIdentity.
func (cs *Clusters) Connect(ctx context.Context, kube client.Client, providerConfig string, c Credentials, inCluster *rest.Config) (*Cluster, error) {
	var (
		cl  *Cluster
		err error
	)
	switch c.Source { //nolint:exhaustive // the CRDs admit only these two.
	case xpv2.CredentialsSourceInjectedIdentity:
		cl, err = cs.ForConfig(providerConfig, inCluster)
	default:
		var kubeconfig []byte
		kubeconfig, err = resource.CommonCredentialExtractor(ctx, c.Source, kube, c.Selectors)
		if err != nil {
			return nil, fmt.Errorf("cannot read the kubeconfig of %s from ProviderConfig %q: %w", cs.kind.Cluster, providerConfig, err)
		}
		cl, err = cs.ForKubeconfig(providerConfig, kubeconfig)
	}
	if err != nil {
		return nil, fmt.Errorf("ProviderConfig %q: %w", providerConfig, err)
	}
	return cl, nil
}

// watch starts a watch of cfg's cluster and waits for its first list. The
// watch outlives the reconcile that started it; it stops when the Cluster
// is dropped from the cache.
func (cs *Clusters) watch(providerConfig string, cfg *rest.Config) (*Cluster, error) {
	k := cs.kind
	c, err := crcache.New(cfg, crcache.Options{Scheme: k.Scheme})
	if err != nil {
		return nil, fmt.Errorf("cannot reach %s: %w", k.Cluster, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	inf, err := c.GetInformer(ctx, k.New(), crcache.BlockUntilSynced(false))
	if err != nil {
		cancel()
		return nil, fmt.Errorf("cannot watch the %s of %s (are their CRDs installed?): %w", k.Objects, k.Cluster, err)
	}
	notify := func(any) { cs.changes <- event.TypedGenericEvent[string]{Object: providerConfig} }
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: notify,
		UpdateFunc: func(old, o any) {
			if k.Changed == nil || k.Changed(old, o) {
				notify(o)
			}
		},
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
		return nil, fmt.Errorf("cannot list the %s of %s within %s: the credentials need %s", k.Objects, k.Cluster, syncTimeout, k.Permission)
	}
	cl := &Cluster{cache: c, cancel: cancel}
	go cl.probe(ctx, cfg, k.Cluster, func() { notify(nil) })
	return cl, nil
}

// debounce gathers a burst of changes into one observation: a rack powering
// up changes dozens of objects within a second, and every status change of
// a managed resource wakes its composite (Crossplane opens a circuit breaker
// on composites woken too often). The work queue keeps one delayed request
// per managed resource.
const debounce = time.Second

// Source requests, once per burst of changes, an observation of every
// managed resource (listed into list) whose ProviderConfig saw a change.
func Source(kube client.Client, cs *Clusters, list func() resource.ManagedList) source.Source {
	return source.Channel(cs.Changes(), handler.TypedFuncs[string, reconcile.Request]{
		GenericFunc: func(ctx context.Context, e event.TypedGenericEvent[string], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			l := list()
			if err := kube.List(ctx, l); err != nil {
				return
			}
			for _, mg := range l.GetItems() {
				r, ok := mg.(resource.ProviderConfigReferencer)
				if !ok {
					continue
				}
				if ref := r.GetProviderConfigReference(); ref != nil && ref.Name == e.Object {
					q.AddAfter(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(mg)}, debounce)
				}
			}
		},
	})
}
