// Package serverinventory observes the metal-operator Servers of an IronCore
// machine pool.
//
// A ServerInventory writes nothing: Observe counts the watched Servers of
// its labels and always reports the "external resource" as existing and up
// to date, so Create, Update and Delete are never asked to act. Each metal
// cluster's Servers are watched once per ProviderConfig, and every change
// requests a reconcile of the inventories of that ProviderConfig.
package serverinventory

import (
	"context"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metalv1alpha1 "github.com/ironcore-dev/metal-operator/api/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/c5c3/consumer-plane/apis/ironcore/v1alpha1"
	"github.com/c5c3/consumer-plane/provider/internal/clients/ironcore"
	"github.com/c5c3/consumer-plane/provider/internal/clients/watch"
	pcontroller "github.com/c5c3/consumer-plane/provider/internal/controller"
	"github.com/c5c3/consumer-plane/provider/internal/controller/providerconfig"
)

// listed bounds the server names a status lists.
const listed = 10

// Setup adds the ServerInventory controller. Every change of a watched
// Server requests an observation of the inventories of its ProviderConfig.
func Setup(mgr ctrl.Manager, o controller.Options, clusters *watch.Clusters) error {
	c := providerconfig.ClusterView(mgr, clusters, newProviderConfig, func(cl *watch.Cluster) managed.TypedExternalClient[*v1alpha1.ServerInventory] {
		return &external{cluster: cl}
	})
	changed := watch.Source(mgr.GetClient(), clusters, func() resource.ManagedList { return &v1alpha1.ServerInventoryList{} })
	return pcontroller.SetupManagedWatching(mgr, o, v1alpha1.SchemeGroupVersion.WithKind(v1alpha1.ServerInventoryKind), &v1alpha1.ServerInventoryList{},
		changed, managed.WithTypedExternalConnector[*v1alpha1.ServerInventory](c))
}

func newProviderConfig() (*v1alpha1.ProviderConfig, resource.LegacyProviderConfigUsage) {
	return &v1alpha1.ProviderConfig{}, &v1alpha1.ProviderConfigUsage{}
}

// external observes the Servers; the inventory is a view and writes nothing.
type external struct {
	pcontroller.View[*v1alpha1.ServerInventory]
	cluster *watch.Cluster
}

func (e *external) Observe(ctx context.Context, mg *v1alpha1.ServerInventory) (managed.ExternalObservation, error) {
	if meta.WasDeleted(mg) {
		// Nothing to delete: report the view gone so the finalizer goes.
		return managed.ExternalObservation{}, nil
	}
	servers, err := ironcore.Servers(ctx, e.cluster, mg.Spec.ForProvider.ServerSelector)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	mg.Status.AtProvider = Count(servers, mg.Spec.ForProvider.ClaimNamePrefix)
	mg.SetConditions(xpv2.Available())
	return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
}

// Count sorts servers into the observation's states and sums what the
// usable and the available ones offer. A Server claimed by a ServerClaim
// whose name begins with ownClaimPrefix is the pool's own; with an empty
// prefix every claimed Server is another pool's.
func Count(servers []metalv1alpha1.Server, ownClaimPrefix string) v1alpha1.ServerInventoryObservation {
	o := v1alpha1.ServerInventoryObservation{Servers: int32(len(servers))} //nolint:gosec // a pool has far fewer than 2^31 servers.
	for i := range servers {
		s := &servers[i]
		claim := s.Spec.ServerClaimRef
		switch {
		case s.Status.State == metalv1alpha1.ServerStateError:
			o.Failed++
			if len(o.FailedServers) < listed {
				o.FailedServers = append(o.FailedServers, s.Name)
			}
			continue
		case claim != nil && (ownClaimPrefix == "" || !strings.HasPrefix(claim.Name, ownClaimPrefix)),
			claim == nil && s.Status.State == metalv1alpha1.ServerStateReserved:
			o.ClaimedByOthers++
			if len(o.ClaimedByOthersServers) < listed {
				o.ClaimedByOthersServers = append(o.ClaimedByOthersServers, v1alpha1.ClaimedServer{Server: s.Name, Claim: claimName(claim)})
			}
			continue
		case claim != nil:
			o.Claimed++
		case s.Status.State == metalv1alpha1.ServerStateMaintenance, s.Status.State == metalv1alpha1.ServerStateParked, s.Spec.Unclaimable:
			o.Maintenance++
		case s.Status.State == metalv1alpha1.ServerStateAvailable:
			o.Available++
			add(&o.AvailableCapacity, s)
		case s.Status.State == metalv1alpha1.ServerStateReleased:
			o.Released++
		default: // Initial, Discovery, or no state yet.
			o.Discovering++
		}
		o.Usable++
		disk := add(&o.UsableCapacity, s)
		if o.Usable == 1 || disk < o.SmallestDiskGiB {
			o.SmallestDiskGiB = disk
		}
	}
	return o
}

func claimName(ref *metalv1alpha1.ImmutableObjectReference) string {
	if ref == nil {
		return "(reserved without a ServerClaim)"
	}
	return ref.Namespace + "/" + ref.Name
}

// add adds a server's CPUs (threads, or cores where a processor reports no
// threads), memory and drives to c, and returns its drives' GiB.
func add(c *v1alpha1.ServerCapacity, s *metalv1alpha1.Server) int64 {
	for _, p := range s.Status.Processors {
		if p.TotalThreads > 0 {
			c.CPUs += int64(p.TotalThreads)
		} else {
			c.CPUs += int64(p.TotalCores)
		}
	}
	if m := s.Status.TotalSystemMemory; m != nil {
		c.MemoryGiB += m.Value() >> 30
	}
	var disk int64
	for _, st := range s.Status.Storages {
		for _, d := range st.Drives {
			if d.Capacity != nil {
				disk += d.Capacity.Value()
			}
		}
	}
	c.DiskGiB += disk >> 30
	return disk >> 30
}
