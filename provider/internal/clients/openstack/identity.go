package openstack

import (
	"context"
	"fmt"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/applicationcredentials"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/domains"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/projects"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/roles"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/users"
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

	GetUser(ctx context.Context, id string) (*users.User, error)
	FindUser(ctx context.Context, domainID, name string) (*users.User, error)
	CreateUser(ctx context.Context, opts users.CreateOpts) (*users.User, error)
	UpdateUser(ctx context.Context, id string, opts users.UpdateOpts) (*users.User, error)
	DeleteUser(ctx context.Context, id string) error

	// FindRole returns the role of a name, global when domainID is empty.
	FindRole(ctx context.Context, domainID, name string) (*roles.Role, error)
	// HasGrant reports whether the grant exists; Grant and Revoke are
	// idempotent in Keystone.
	HasGrant(ctx context.Context, roleID string, g roles.AssignOpts) (bool, error)
	Grant(ctx context.Context, roleID string, g roles.AssignOpts) error
	Revoke(ctx context.Context, roleID string, g roles.AssignOpts) error

	// Application credentials of a user; Keystone lets the user itself
	// create them, so these are called on the user's own session.
	GetApplicationCredential(ctx context.Context, userID, id string) (*applicationcredentials.ApplicationCredential, error)
	FindApplicationCredential(ctx context.Context, userID, name string) (*applicationcredentials.ApplicationCredential, error)
	CreateApplicationCredential(ctx context.Context, userID string, opts applicationcredentials.CreateOpts) (*applicationcredentials.ApplicationCredential, error)
	DeleteApplicationCredential(ctx context.Context, userID, id string) error
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

func (c identity) GetUser(ctx context.Context, id string) (*users.User, error) {
	return users.Get(ctx, c.sc, id).Extract()
}

func (c identity) FindUser(ctx context.Context, domainID, name string) (*users.User, error) {
	pages, err := users.List(c.sc, users.ListOpts{DomainID: domainID, Name: name}).AllPages(ctx)
	if err != nil {
		return nil, err
	}
	all, err := users.ExtractUsers(pages)
	if err != nil || len(all) == 0 {
		return nil, err
	}
	return &all[0], nil
}

func (c identity) CreateUser(ctx context.Context, opts users.CreateOpts) (*users.User, error) {
	return users.Create(ctx, c.sc, opts).Extract()
}

func (c identity) UpdateUser(ctx context.Context, id string, opts users.UpdateOpts) (*users.User, error) {
	return users.Update(ctx, c.sc, id, opts).Extract()
}

func (c identity) DeleteUser(ctx context.Context, id string) error {
	return users.Delete(ctx, c.sc, id).ExtractErr()
}

func (c identity) FindRole(ctx context.Context, domainID, name string) (*roles.Role, error) {
	pages, err := roles.List(c.sc, roles.ListOpts{DomainID: domainID, Name: name}).AllPages(ctx)
	if err != nil {
		return nil, err
	}
	all, err := roles.ExtractRoles(pages)
	if err != nil || len(all) == 0 {
		return nil, err
	}
	return &all[0], nil
}

func (c identity) HasGrant(ctx context.Context, roleID string, g roles.AssignOpts) (bool, error) {
	err := roles.Validate(ctx, c.sc, roleID, roles.ValidateOpts{UserID: g.UserID, GroupID: g.GroupID, ProjectID: g.ProjectID, DomainID: g.DomainID}).ExtractErr()
	if IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

func (c identity) Grant(ctx context.Context, roleID string, g roles.AssignOpts) error {
	return roles.Assign(ctx, c.sc, roleID, g).ExtractErr()
}

func (c identity) Revoke(ctx context.Context, roleID string, g roles.AssignOpts) error {
	return roles.Unassign(ctx, c.sc, roleID, roles.UnassignOpts{UserID: g.UserID, GroupID: g.GroupID, ProjectID: g.ProjectID, DomainID: g.DomainID}).ExtractErr()
}

func (c identity) GetApplicationCredential(ctx context.Context, userID, id string) (*applicationcredentials.ApplicationCredential, error) {
	return applicationcredentials.Get(ctx, c.sc, userID, id).Extract()
}

func (c identity) FindApplicationCredential(ctx context.Context, userID, name string) (*applicationcredentials.ApplicationCredential, error) {
	pages, err := applicationcredentials.List(c.sc, userID, applicationcredentials.ListOpts{Name: name}).AllPages(ctx)
	if err != nil {
		return nil, err
	}
	all, err := applicationcredentials.ExtractApplicationCredentials(pages)
	if err != nil || len(all) == 0 {
		return nil, err
	}
	return &all[0], nil
}

func (c identity) CreateApplicationCredential(ctx context.Context, userID string, opts applicationcredentials.CreateOpts) (*applicationcredentials.ApplicationCredential, error) {
	return applicationcredentials.Create(ctx, c.sc, userID, opts).Extract()
}

func (c identity) DeleteApplicationCredential(ctx context.Context, userID, id string) error {
	return applicationcredentials.Delete(ctx, c.sc, userID, id).ExtractErr()
}
