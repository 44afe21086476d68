// Package register adds every API type and controller of the provider to a
// manager; the provider binary and the integration tests share it.
package register

import (
	"errors"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cephv1alpha1 "github.com/c5c3/consumer-plane/apis/ceph/v1alpha1"
	cinderv1alpha1 "github.com/c5c3/consumer-plane/apis/cinder/v1alpha1"
	gardenerv1alpha1 "github.com/c5c3/consumer-plane/apis/gardener/v1alpha1"
	ironcorev1alpha1 "github.com/c5c3/consumer-plane/apis/ironcore/v1alpha1"
	keystonev1alpha1 "github.com/c5c3/consumer-plane/apis/keystone/v1alpha1"
	kvmv1alpha1 "github.com/c5c3/consumer-plane/apis/kvm/v1alpha1"
	neutronv1alpha1 "github.com/c5c3/consumer-plane/apis/neutron/v1alpha1"
	novav1alpha1 "github.com/c5c3/consumer-plane/apis/nova/v1alpha1"
	openstackv1alpha1 "github.com/c5c3/consumer-plane/apis/openstack/v1alpha1"
	ovnv1alpha1 "github.com/c5c3/consumer-plane/apis/ovn/v1alpha1"
	"github.com/c5c3/consumer-plane/provider/internal/clients/ceph"
	"github.com/c5c3/consumer-plane/provider/internal/clients/gardener"
	"github.com/c5c3/consumer-plane/provider/internal/clients/openstack"
	"github.com/c5c3/consumer-plane/provider/internal/clients/ovn"
	"github.com/c5c3/consumer-plane/provider/internal/clients/watch"
	cephclient "github.com/c5c3/consumer-plane/provider/internal/controller/ceph/client"
	cephpool "github.com/c5c3/consumer-plane/provider/internal/controller/ceph/pool"
	"github.com/c5c3/consumer-plane/provider/internal/controller/cinder/volumetype"
	"github.com/c5c3/consumer-plane/provider/internal/controller/gardener/shootkubeconfig"
	"github.com/c5c3/consumer-plane/provider/internal/controller/ironcore/serverinventory"
	"github.com/c5c3/consumer-plane/provider/internal/controller/keystone/applicationcredential"
	"github.com/c5c3/consumer-plane/provider/internal/controller/keystone/domain"
	"github.com/c5c3/consumer-plane/provider/internal/controller/keystone/project"
	"github.com/c5c3/consumer-plane/provider/internal/controller/keystone/roleassignment"
	"github.com/c5c3/consumer-plane/provider/internal/controller/keystone/user"
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
		cinderv1alpha1.AddToScheme, neutronv1alpha1.AddToScheme, gardenerv1alpha1.AddToScheme, ironcorev1alpha1.AddToScheme, kvmv1alpha1.AddToScheme, cephv1alpha1.AddToScheme, ovnv1alpha1.AddToScheme,
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

	NewIdentity     func(*openstack.Session) (openstack.Identity, error)
	NewCompute      func(*openstack.Session) (openstack.Compute, error)
	NewBlockStorage func(*openstack.Session) (openstack.BlockStorage, error)
}

// All adds every controller of the provider.
func All(mgr ctrl.Manager, o controller.Options, d Deps) error {
	pc := providerconfig.OpenStack{Kube: mgr.GetClient(), Sessions: d.Sessions}
	ovnPC := providerconfig.OVN{Kube: mgr.GetClient(), Conns: d.OVN}
	cephPC := providerconfig.Ceph{Kube: mgr.GetClient(), Conns: d.Ceph}
	errs := []error{
		project.Setup(mgr, o, pc, orDefault(d.NewIdentity, openstack.NewIdentity)),
		domain.Setup(mgr, o, pc, orDefault(d.NewIdentity, openstack.NewIdentity)),
		user.Setup(mgr, o, pc, orDefault(d.NewIdentity, openstack.NewIdentity)),
		roleassignment.Setup(mgr, o, pc, orDefault(d.NewIdentity, openstack.NewIdentity)),
		applicationcredential.Setup(mgr, o, pc, orDefault(d.NewIdentity, openstack.NewIdentity)),
		aggregate.Setup(mgr, o, pc, orDefault(d.NewCompute, openstack.NewCompute)),
		volumetype.Setup(mgr, o, pc, orDefault(d.NewBlockStorage, openstack.NewBlockStorage)),
		quotaset.SetupAll(mgr, o, pc),
		shootkubeconfig.Setup(mgr, o, d.Gardens),
		serverinventory.Setup(mgr, o, d.IronCore),
		hypervisorinventory.Setup(mgr, o, d.KVM),
		logicalswitch.Setup(mgr, o, ovnPC),
		logicalrouter.Setup(mgr, o, ovnPC),
		hachassisgroup.Setup(mgr, o, ovnPC),
		nbglobal.Setup(mgr, o, ovnPC),
		chassisset.Setup(mgr, o, ovnPC),
		cephpool.Setup(mgr, o, cephPC),
		cephclient.Setup(mgr, o, cephPC),
		providerconfig.Setup(mgr, o),
		providerconfig.SetupCatalog(mgr, o, pc),
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
