package providerconfig

import (
	"context"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/consumer-plane/provider/internal/clients/openstack"
	pcontroller "github.com/c5c3/consumer-plane/provider/internal/controller"
)

// Get records that mg uses the ProviderConfig it references (usage tracks
// it, so a ProviderConfig in use is not deleted) and reads that
// ProviderConfig into pc. Tracking comes first: it also fails, naming the
// problem, when mg references no ProviderConfig.
func Get(ctx context.Context, kube client.Client, mg resource.LegacyManaged, usage resource.LegacyProviderConfigUsage, pc client.Object) error {
	if err := resource.NewLegacyProviderConfigUsageTracker(kube, usage).Track(ctx, mg); err != nil {
		return errors.Wrap(err, errTrackUsage)
	}
	name := mg.GetProviderConfigReference().Name
	return errors.Wrapf(kube.Get(ctx, client.ObjectKey{Name: name}, pc), errGetPC, name)
}

// A Connector connects managed resources of kind T through the client C
// of the backend their ProviderConfig names: Client tracks the
// ProviderConfig's use and returns the (shared) client — OVN.Conn,
// Ceph.Client, or OpenStackClient for a service of a cloud —, External
// wraps it into the kind's external client.
type Connector[T resource.LegacyManaged, C any] struct {
	Client   func(context.Context, resource.LegacyManaged) (C, error)
	External func(C) managed.TypedExternalClient[T]
}

// Connect returns the external client of mg's backend.
func (c Connector[T, C]) Connect(ctx context.Context, mg T) (managed.TypedExternalClient[T], error) {
	cl, err := c.Client(ctx, mg)
	if err != nil {
		return nil, err
	}
	return confirmsGone[T]{c.External(cl)}, nil
}

// confirmsGone finishes a deletion on the pass that finds the object gone
// (pcontroller.ConfirmGone), for every kind a Connector connects: each
// kind's Observe only says whether its object exists.
type confirmsGone[T resource.LegacyManaged] struct {
	managed.TypedExternalClient[T]
}

func (e confirmsGone[T]) Observe(ctx context.Context, mg T) (managed.ExternalObservation, error) {
	o, err := e.TypedExternalClient.Observe(ctx, mg)
	if err == nil && !o.ResourceExists {
		pcontroller.ConfirmGone(mg)
	}
	return o, err
}

// OpenStackClient is a Connector's Client for one OpenStack service: the
// session of the ProviderConfig's credential, and the service client
// newClient (openstack.NewX, or a wrapper in tests) builds on it.
func OpenStackClient[C any](o OpenStack, newClient func(*openstack.Session) (C, error)) func(context.Context, resource.LegacyManaged) (C, error) {
	return func(ctx context.Context, mg resource.LegacyManaged) (C, error) {
		s, err := o.Session(ctx, mg)
		if err != nil {
			var none C
			return none, err
		}
		return newClient(s)
	}
}
