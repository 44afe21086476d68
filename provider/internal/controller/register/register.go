// Package register adds every API type and controller of the provider to a
// manager; the provider binary and the integration tests share it.
package register

import (
	"errors"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cephv1alpha1 "github.com/c5c3/consumer-plane/apis/ceph/v1alpha1"
	cinderv1alpha1 "github.com/c5c3/consumer-plane/apis/cinder/v1alpha1"
	gardenerv1alpha1 "github.com/c5c3/consumer-plane/apis/gardener/v1alpha1"
	ironcorev1alpha1 "github.com/c5c3/consumer-plane/apis/ironcore/v1alpha1"
	keystonev1alpha1 "github.com/c5c3/consumer-plane/apis/keystone/v1alpha1"
	kubernetesv1alpha1 "github.com/c5c3/consumer-plane/apis/kubernetes/v1alpha1"
	kvmv1alpha1 "github.com/c5c3/consumer-plane/apis/kvm/v1alpha1"
	neutronv1alpha1 "github.com/c5c3/consumer-plane/apis/neutron/v1alpha1"
	novav1alpha1 "github.com/c5c3/consumer-plane/apis/nova/v1alpha1"
	openstackv1alpha1 "github.com/c5c3/consumer-plane/apis/openstack/v1alpha1"
	ovnv1alpha1 "github.com/c5c3/consumer-plane/apis/ovn/v1alpha1"
	"github.com/c5c3/consumer-plane/internal/shard"
	"github.com/c5c3/consumer-plane/provider/internal/clients/ceph"
	"github.com/c5c3/consumer-plane/provider/internal/clients/gardener"
	"github.com/c5c3/consumer-plane/provider/internal/clients/openstack"
	"github.com/c5c3/consumer-plane/provider/internal/clients/ovn"
	"github.com/c5c3/consumer-plane/provider/internal/clients/remotekube"
	"github.com/c5c3/consumer-plane/provider/internal/clients/secrets"
	"github.com/c5c3/consumer-plane/provider/internal/clients/watch"
	pcontroller "github.com/c5c3/consumer-plane/provider/internal/controller"
	cephclient "github.com/c5c3/consumer-plane/provider/internal/controller/ceph/client"
	cephpool "github.com/c5c3/consumer-plane/provider/internal/controller/ceph/pool"
	cephstretchmode "github.com/c5c3/consumer-plane/provider/internal/controller/ceph/stretchmode"
	"github.com/c5c3/consumer-plane/provider/internal/controller/cinder/volumetype"
	"github.com/c5c3/consumer-plane/provider/internal/controller/gardener/shootkubeconfig"
	"github.com/c5c3/consumer-plane/provider/internal/controller/ironcore/serverinventory"
	"github.com/c5c3/consumer-plane/provider/internal/controller/keystone/applicationcredential"
	"github.com/c5c3/consumer-plane/provider/internal/controller/keystone/domain"
	"github.com/c5c3/consumer-plane/provider/internal/controller/keystone/project"
	"github.com/c5c3/consumer-plane/provider/internal/controller/keystone/roleassignment"
	"github.com/c5c3/consumer-plane/provider/internal/controller/keystone/user"
	"github.com/c5c3/consumer-plane/provider/internal/controller/kubernetes/clusteraccess"
	"github.com/c5c3/consumer-plane/provider/internal/controller/kubernetes/nodelabel"
	"github.com/c5c3/consumer-plane/provider/internal/controller/kubernetes/secretcopy"
	"github.com/c5c3/consumer-plane/provider/internal/controller/kubernetes/storagereport"
	"github.com/c5c3/consumer-plane/provider/internal/controller/kvm/hypervisorinventory"
	"github.com/c5c3/consumer-plane/provider/internal/controller/nova/aggregate"
	"github.com/c5c3/consumer-plane/provider/internal/controller/ovn/chassisset"
	"github.com/c5c3/consumer-plane/provider/internal/controller/ovn/hachassisgroup"
	"github.com/c5c3/consumer-plane/provider/internal/controller/ovn/logicalrouter"
	"github.com/c5c3/consumer-plane/provider/internal/controller/ovn/logicalswitch"
	"github.com/c5c3/consumer-plane/provider/internal/controller/ovn/nbglobal"
	"github.com/c5c3/consumer-plane/provider/internal/controller/providerconfig"
	"github.com/c5c3/consumer-plane/provider/internal/controller/quotaset"
)

// Scheme returns a scheme with Kubernetes' and the provider's types.
func Scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme,
		openstackv1alpha1.AddToScheme, keystonev1alpha1.AddToScheme, novav1alpha1.AddToScheme,
		cinderv1alpha1.AddToScheme, neutronv1alpha1.AddToScheme, gardenerv1alpha1.AddToScheme, ironcorev1alpha1.AddToScheme, kvmv1alpha1.AddToScheme, kubernetesv1alpha1.AddToScheme, cephv1alpha1.AddToScheme, ovnv1alpha1.AddToScheme,
	} {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Deps are what controllers share across kinds, and the constructors of
// their OpenStack clients (nil means gophercloud's; tests wrap them to
// interrupt a reconcile at a chosen call).
type Deps struct {
	// Sessions caches one authenticated OpenStack session per credential.
	Sessions *openstack.Cache
	// Gardens caches one garden cluster client per kubeconfig.
	Gardens *gardener.Clients
	// OVN keeps one monitored connection per OVN database endpoint set.
	OVN *ovn.Cache
	// Ceph keeps one librados connection per cluster and user.
	Ceph *ceph.Cache
	// IronCore watches the Servers of each IronCore metal cluster once.
	IronCore *watch.Clusters
	// KVM watches the Hypervisors of each pool cluster once.
	KVM *watch.Clusters
	// Nodes watches the Nodes' metadata of each pool cluster a NodeLabel
	// labels; nil is a new set of watch.DefaultClusters.
	Nodes *watch.Clusters
	// CephStatuses watches the storage agent's CephStatus of each storage
	// pool cluster a StorageReport reads; nil is a new set of
	// watch.DefaultClusters.
	CephStatuses *watch.Clusters
	// Remote keeps a client per remote cluster SecretCopies write to; nil
	// is a new set of remotekube.DefaultClients.
	Remote *remotekube.Clients
	// SecretCopySources are the namespaces of the management cluster
	// SecretCopies may read from; nil is secretcopy.DefaultSourceNamespaces.
	SecretCopySources []string

	// ReconcilesPerService gives each service the provider manages a
	// reconcile rate limit of its own (this many a second): Keystone,
	// Nova, Cinder, quotas, Gardener, IronCore, KVM, OVN, Ceph, and the
	// ProviderConfigs. 0: every controller shares the Options' limiter.
	// One limit for all made 500 Keystone, Nova and Cinder objects wait on
	// each other's tokens: at 50 a second, the last was Ready after 24 s
	// where a plain loop needs 10 s (#24 §5, docs/benchmarks.md).
	ReconcilesPerService int
	// CredentialsFor is how long a Secret the provider read is kept,
	// answering the reads for which the watch of Secrets' versions shows it
	// unchanged (clients/secrets; 0: every read goes to the API server).
	CredentialsFor time.Duration

	NewIdentity     func(*openstack.Session) (openstack.Identity, error)
	NewCompute      func(*openstack.Session) (openstack.Compute, error)
	NewBlockStorage func(*openstack.Session) (openstack.BlockStorage, error)
}

// All adds every controller of the provider.
func All(mgr ctrl.Manager, o controller.Options, d Deps) error {
	kube := mgr.GetClient()
	if d.CredentialsFor > 0 {
		versions, err := secrets.Versions(mgr.GetCache())
		if err != nil {
			return err
		}
		kube = secrets.Cached(kube, versions, d.CredentialsFor)
		// Every controller's, the managed reconcilers' connection
		// publishing included.
		mgr = pcontroller.WithClient(mgr, kube)
	}
	pc := providerconfig.OpenStack{Kube: kube, Sessions: d.Sessions}
	ovnPC := providerconfig.OVN{Kube: kube, Conns: d.OVN}
	cephPC := providerconfig.Ceph{Kube: kube, Conns: d.Ceph}
	service := func() controller.Options {
		if d.ReconcilesPerService <= 0 {
			return o
		}
		so := o
		so.GlobalRateLimiter = ratelimiter.NewGlobal(d.ReconcilesPerService)
		return so
	}
	keystone, nova, cinder, quotas := service(), service(), service(), service()
	garden, metal, kvm, ovn, ceph, configs := service(), service(), service(), service(), service(), service()
	remote := d.Remote
	if remote == nil {
		remote = remotekube.NewClients(clientgoscheme.Scheme, remotekube.DefaultClients, time.Hour)
	}
	nodes := d.Nodes
	if nodes == nil {
		nodes = remotekube.NewNodes(watch.DefaultClusters, time.Hour)
	}
	cephStatuses := d.CephStatuses
	if cephStatuses == nil {
		cephStatuses = remotekube.NewCephStatuses(watch.DefaultClusters, time.Hour)
	}
	errs := []error{
		project.Setup(mgr, keystone, pc, orDefault(d.NewIdentity, openstack.NewIdentity)),
		domain.Setup(mgr, keystone, pc, orDefault(d.NewIdentity, openstack.NewIdentity)),
		user.Setup(mgr, keystone, pc, orDefault(d.NewIdentity, openstack.NewIdentity)),
		roleassignment.Setup(mgr, keystone, pc, orDefault(d.NewIdentity, openstack.NewIdentity)),
		applicationcredential.Setup(mgr, keystone, pc, orDefault(d.NewIdentity, openstack.NewIdentity)),
		aggregate.Setup(mgr, nova, pc, orDefault(d.NewCompute, openstack.NewCompute)),
		volumetype.Setup(mgr, cinder, pc, orDefault(d.NewBlockStorage, openstack.NewBlockStorage)),
		quotaset.SetupAll(mgr, quotas, pc),
		shootkubeconfig.Setup(mgr, garden, d.Gardens),
		serverinventory.Setup(mgr, metal, d.IronCore),
		hypervisorinventory.Setup(mgr, kvm, d.KVM),
		secretcopy.Setup(mgr, kvm, remote, d.SecretCopySources),
		nodelabel.Setup(mgr, kvm, remote, nodes),
		clusteraccess.Setup(mgr, kvm, remote),
		storagereport.Setup(mgr, kvm, cephStatuses),
		logicalswitch.Setup(mgr, ovn, ovnPC),
		logicalrouter.Setup(mgr, ovn, ovnPC),
		hachassisgroup.Setup(mgr, ovn, ovnPC),
		nbglobal.Setup(mgr, ovn, ovnPC),
		chassisset.Setup(mgr, ovn, ovnPC),
		cephpool.Setup(mgr, ceph, cephPC),
		cephclient.Setup(mgr, ceph, cephPC),
		cephstretchmode.Setup(mgr, ceph, cephPC),
		providerconfig.Setup(mgr, configs),
		providerconfig.SetupCatalog(mgr, configs, pc),
	}
	return errors.Join(errs...)
}

func orDefault[T any](f, def func(*openstack.Session) (T, error)) func(*openstack.Session) (T, error) {
	if f != nil {
		return f
	}
	return def
}

// ClientOptions are the options of the manager's client. Secrets are read
// from the API server, not from a cache: a cached read would start an
// informer holding every Secret of the cluster in the provider's memory,
// where it reads a handful (credentials, kubeconfigs, passwords), once per
// connect (#23 §11).
func ClientOptions() client.Options {
	return client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}}
}

// CacheOptions are the options of the manager's cache.
//
// Secrets are watched for their versions alone (secrets.Version):
// each kept with its name and resourceVersion only, since kubectl keeps a
// Secret's data in an annotation, so that the Secrets the provider reads
// are read again when they change instead of on every use.
//
// A replica that serves the resources sel selects (a shard, internal/shard)
// watches and caches every managed resource kind and the OpenStack
// ProviderConfigs through sel, so it holds and reconciles its shard alone.
// The other ProviderConfig kinds stay whole: the landscape's own (the
// garden's, the metal cluster's) serve every shard's pools, and they are
// few. ProviderConfigUsages stay whole too, so that each replica counts a
// ProviderConfig's users as they are.
func CacheOptions(s *runtime.Scheme, sel labels.Selector) cache.Options {
	by := map[client.Object]cache.ByObject{
		secrets.Version(): {Transform: secrets.VersionOnly},
	}
	if sel.Empty() {
		return cache.Options{ByObject: by}
	}
	openstackPC := openstackv1alpha1.SchemeGroupVersion.WithKind("ProviderConfig")
	for gvk := range s.AllKnownTypes() {
		if !strings.HasSuffix(gvk.Group, shard.Groups) {
			continue
		}
		o, err := s.New(gvk)
		if err != nil {
			continue
		}
		if _, managed := o.(resource.Managed); managed || gvk == openstackPC {
			by[o.(client.Object)] = cache.ByObject{Label: sel}
		}
	}
	return cache.Options{ByObject: by}
}
