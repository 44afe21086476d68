package providerconfig

import (
	"context"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/consumer-plane/provider/internal/clients/openstack"
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

// A Connector connects managed resources of kind T to the OpenStack client
// C (Identity, Compute, ...) of the cloud their ProviderConfig names: the
// connect order of every OpenStack kind (track usage, read the
// ProviderConfig and credentials, get the cached session, build the client).
type Connector[T resource.LegacyManaged, C any] struct {
	OpenStack OpenStack
	// NewClient builds the service client from a session (openstack.NewX,
	// or a wrapper in tests).
	NewClient func(*openstack.Session) (C, error)
	// External is the kind's external client around the service client.
	External func(C) managed.TypedExternalClient[T]
}

// Connect returns the external client of mg's cloud.
func (c Connector[T, C]) Connect(ctx context.Context, mg T) (managed.TypedExternalClient[T], error) {
	s, err := c.OpenStack.Session(ctx, mg)
	if err != nil {
		return nil, err
	}
	sc, err := c.NewClient(s)
	if err != nil {
		return nil, err
	}
	return c.External(sc), nil
}
