package openstack

import (
	"context"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/aggregates"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
)

// Compute is what the Nova aggregate controller needs. Nova enforces unique
// aggregate names, so FindAggregate returns at most one.
type Compute interface {
	GetAggregate(ctx context.Context, id int) (*aggregates.Aggregate, error)
	FindAggregate(ctx context.Context, name string) (*aggregates.Aggregate, error)
	// ListAggregates lists every aggregate (benchmarks and tests).
	ListAggregates(ctx context.Context) ([]aggregates.Aggregate, error)
	CreateAggregate(ctx context.Context, opts aggregates.CreateOpts) (*aggregates.Aggregate, error)
	UpdateAggregate(ctx context.Context, id int, opts aggregates.UpdateOpts) (*aggregates.Aggregate, error)
	// SetAggregateMetadata sets keys; a nil value removes a key.
	SetAggregateMetadata(ctx context.Context, id int, metadata map[string]any) error
	AddAggregateHost(ctx context.Context, id int, host string) error
	RemoveAggregateHost(ctx context.Context, id int, host string) error
	DeleteAggregate(ctx context.Context, id int) error
	// ServersOnHost names the servers of the projects on a compute host.
	ServersOnHost(ctx context.Context, host string, projectIDs []string) ([]string, error)
}

// NewCompute returns the Nova client of a session.
func NewCompute(s *Session) (Compute, error) {
	sc, err := s.Service(ServiceCompute)
	if err != nil {
		return nil, err
	}
	return compute{sc: sc}, nil
}

type compute struct{ sc *gophercloud.ServiceClient }

func (c compute) GetAggregate(ctx context.Context, id int) (*aggregates.Aggregate, error) {
	return aggregates.Get(ctx, c.sc, id).Extract()
}

func (c compute) ListAggregates(ctx context.Context) ([]aggregates.Aggregate, error) {
	pages, err := aggregates.List(c.sc).AllPages(ctx)
	if err != nil {
		return nil, err
	}
	return aggregates.ExtractAggregates(pages)
}

func (c compute) FindAggregate(ctx context.Context, name string) (*aggregates.Aggregate, error) {
	// os-aggregates has no name filter; the list is small (one per pool and
	// tenant) and Nova serves it from one table.
	all, err := c.ListAggregates(ctx)
	if err != nil {
		return nil, err
	}
	for i := range all {
		if all[i].Name == name {
			return &all[i], nil
		}
	}
	return nil, nil
}

func (c compute) CreateAggregate(ctx context.Context, opts aggregates.CreateOpts) (*aggregates.Aggregate, error) {
	return aggregates.Create(ctx, c.sc, opts).Extract()
}

func (c compute) UpdateAggregate(ctx context.Context, id int, opts aggregates.UpdateOpts) (*aggregates.Aggregate, error) {
	return aggregates.Update(ctx, c.sc, id, opts).Extract()
}

func (c compute) SetAggregateMetadata(ctx context.Context, id int, metadata map[string]any) error {
	_, err := aggregates.SetMetadata(ctx, c.sc, id, aggregates.SetMetadataOpts{Metadata: metadata}).Extract()
	return err
}

func (c compute) AddAggregateHost(ctx context.Context, id int, host string) error {
	_, err := aggregates.AddHost(ctx, c.sc, id, aggregates.AddHostOpts{Host: host}).Extract()
	return err
}

func (c compute) RemoveAggregateHost(ctx context.Context, id int, host string) error {
	_, err := aggregates.RemoveHost(ctx, c.sc, id, aggregates.RemoveHostOpts{Host: host}).Extract()
	return err
}

func (c compute) DeleteAggregate(ctx context.Context, id int) error {
	return aggregates.Delete(ctx, c.sc, id).ExtractErr()
}

// ServersOnHost lists, as an admin, the servers of each project on host:
// GET /servers (not /servers/detail, which reads every server's flavor and
// ports) with Nova's host and tenant_id filters. Names are "name (id)".
func (c compute) ServersOnHost(ctx context.Context, host string, projectIDs []string) ([]string, error) {
	var out []string
	for _, p := range projectIDs {
		pages, err := servers.ListSimple(c.sc, servers.ListOpts{AllTenants: true, Host: host, TenantID: p}).AllPages(ctx)
		if err != nil {
			return nil, err
		}
		found, err := servers.ExtractServers(pages)
		if err != nil {
			return nil, err
		}
		for _, s := range found {
			out = append(out, s.Name+" ("+s.ID+")")
		}
	}
	return out, nil
}
