package row

import (
	"context"

	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/c5c3/consumer-plane/provider/internal/clients/ovn"
	"github.com/c5c3/consumer-plane/provider/internal/controller/providerconfig"
)

// A Connector connects managed resources of kind T to the shared OVN
// connection of their ProviderConfig.
type Connector[T resource.LegacyManaged] struct {
	OVN providerconfig.OVN
	// External is the kind's external client around the connection.
	External func(*ovn.Conn) managed.TypedExternalClient[T]
}

// Connect returns the external client of mg's databases.
func (c Connector[T]) Connect(ctx context.Context, mg T) (managed.TypedExternalClient[T], error) {
	conn, err := c.OVN.Conn(ctx, mg)
	if err != nil {
		return nil, err
	}
	return c.External(conn), nil
}
