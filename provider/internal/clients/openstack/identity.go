package openstack

import (
	"context"
	"fmt"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/domains"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/projects"
)

// Identity is what the Keystone controllers need. Find* return (nil, nil)
// when nothing matches; Get* return an error that IsNotFound recognises.
type Identity interface {
	GetProject(ctx context.Context, id string) (*projects.Project, error)
	FindProject(ctx context.Context, domainID, name string) (*projects.Project, error)
	CreateProject(ctx context.Context, opts projects.CreateOpts) (*projects.Project, error)
	UpdateProject(ctx context.Context, id string, opts projects.UpdateOpts) (*projects.Project, error)
	DeleteProject(ctx context.Context, id string) error

	GetDomain(ctx context.Context, id string) (*domains.Domain, error)
	FindDomain(ctx context.Context, name string) (*domains.Domain, error)
	CreateDomain(ctx context.Context, opts domains.CreateOpts) (*domains.Domain, error)
	UpdateDomain(ctx context.Context, id string, opts domains.UpdateOpts) (*domains.Domain, error)
	DeleteDomain(ctx context.Context, id string) error
}

// NewIdentity returns the Keystone client of a session.
func NewIdentity(s *Session) (Identity, error) {
	sc, err := s.Service(ServiceIdentity)
	if err != nil {
		return nil, err
	}
	return identity{sc: sc}, nil
}

type identity struct{ sc *gophercloud.ServiceClient }

func (c identity) GetProject(ctx context.Context, id string) (*projects.Project, error) {
	return projects.Get(ctx, c.sc, id).Extract()
}

func (c identity) FindProject(ctx context.Context, domainID, name string) (*projects.Project, error) {
	pages, err := projects.List(c.sc, projects.ListOpts{DomainID: domainID, Name: name}).AllPages(ctx)
	if err != nil {
		return nil, err
	}
	all, err := projects.ExtractProjects(pages)
	if err != nil || len(all) == 0 {
		return nil, err
	}
	return &all[0], nil
}

func (c identity) CreateProject(ctx context.Context, opts projects.CreateOpts) (*projects.Project, error) {
	return projects.Create(ctx, c.sc, opts).Extract()
}

func (c identity) UpdateProject(ctx context.Context, id string, opts projects.UpdateOpts) (*projects.Project, error) {
	return projects.Update(ctx, c.sc, id, opts).Extract()
}

func (c identity) DeleteProject(ctx context.Context, id string) error {
	return projects.Delete(ctx, c.sc, id).ExtractErr()
}

func (c identity) GetDomain(ctx context.Context, id string) (*domains.Domain, error) {
	return domains.Get(ctx, c.sc, id).Extract()
}

func (c identity) FindDomain(ctx context.Context, name string) (*domains.Domain, error) {
	pages, err := domains.List(c.sc, domains.ListOpts{Name: name}).AllPages(ctx)
	if err != nil {
		return nil, err
	}
	all, err := domains.ExtractDomains(pages)
	if err != nil || len(all) == 0 {
		return nil, err
	}
	if len(all) > 1 {
		return nil, fmt.Errorf("keystone lists %d domains named %q", len(all), name)
	}
	return &all[0], nil
}

func (c identity) CreateDomain(ctx context.Context, opts domains.CreateOpts) (*domains.Domain, error) {
	return domains.Create(ctx, c.sc, opts).Extract()
}

func (c identity) UpdateDomain(ctx context.Context, id string, opts domains.UpdateOpts) (*domains.Domain, error) {
	return domains.Update(ctx, c.sc, id, opts).Extract()
}

func (c identity) DeleteDomain(ctx context.Context, id string) error {
	return domains.Delete(ctx, c.sc, id).ExtractErr()
}
