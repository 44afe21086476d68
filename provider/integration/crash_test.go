package integration

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumetypes"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/aggregates"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/applicationcredentials"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/domains"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/projects"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/users"

	"github.com/c5c3/consumer-plane/provider/internal/clients/openstack"
)

// Objects whose name starts with crashPrefix kill their first reconcile
// right after OpenStack created them, before the provider could record the
// ID: the state a crashed provider leaves behind. The panic unwinds the
// whole reconcile (controller-runtime recovers it), so nothing after the
// create runs, exactly as if the process had died.
const crashPrefix = "crash-"

// Objects whose name starts with lostPrefix lose the answer to their first
// create: OpenStack creates them, and the call reports the reconcile's
// deadline passed, as it does when a loaded cloud answers too late.
const lostPrefix = "lost-"

var crashed, lost sync.Map // name -> struct{}

// afterCreate interrupts the first create of a crash- or lost- object; it
// returns the error the create call reports.
func afterCreate(name string) error {
	switch {
	case strings.HasPrefix(name, crashPrefix):
		if _, already := crashed.LoadOrStore(name, struct{}{}); !already {
			panic("test: the provider dies after the cloud created " + name + ", before its ID is recorded")
		}
	case strings.HasPrefix(name, lostPrefix):
		if _, already := lost.LoadOrStore(name, struct{}{}); !already {
			return fmt.Errorf("test: the answer to creating %s is lost: %w", name, context.DeadlineExceeded)
		}
	}
	return nil
}

type crashIdentity struct{ openstack.Identity }

func crashingIdentity(s *openstack.Session) (openstack.Identity, error) {
	c, err := openstack.NewIdentity(s)
	return crashIdentity{c}, err
}

func (c crashIdentity) CreateProject(ctx context.Context, opts projects.CreateOpts) (*projects.Project, error) {
	p, err := c.Identity.CreateProject(ctx, opts)
	if err == nil {
		if err := afterCreate(opts.Name); err != nil {
			return nil, err
		}
	}
	return p, err
}

type crashCompute struct{ openstack.Compute }

func crashingCompute(s *openstack.Session) (openstack.Compute, error) {
	c, err := openstack.NewCompute(s)
	return crashCompute{c}, err
}

func (c crashCompute) CreateAggregate(ctx context.Context, opts aggregates.CreateOpts) (*aggregates.Aggregate, error) {
	a, err := c.Compute.CreateAggregate(ctx, opts)
	if err == nil {
		if err := afterCreate(opts.Name); err != nil {
			return nil, err
		}
	}
	return a, err
}

type crashBlockStorage struct{ openstack.BlockStorage }

func crashingBlockStorage(s *openstack.Session) (openstack.BlockStorage, error) {
	c, err := openstack.NewBlockStorage(s)
	return crashBlockStorage{c}, err
}

func (c crashBlockStorage) CreateVolumeType(ctx context.Context, opts volumetypes.CreateOpts) (*volumetypes.VolumeType, error) {
	v, err := c.BlockStorage.CreateVolumeType(ctx, opts)
	if err == nil {
		if err := afterCreate(opts.Name); err != nil {
			return nil, err
		}
	}
	return v, err
}

func (c crashIdentity) CreateDomain(ctx context.Context, opts domains.CreateOpts) (*domains.Domain, error) {
	d, err := c.Identity.CreateDomain(ctx, opts)
	if err == nil {
		if err := afterCreate(opts.Name); err != nil {
			return nil, err
		}
	}
	return d, err
}

func (c crashIdentity) CreateUser(ctx context.Context, opts users.CreateOpts) (*users.User, error) {
	u, err := c.Identity.CreateUser(ctx, opts)
	if err == nil {
		if err := afterCreate(opts.Name); err != nil {
			return nil, err
		}
	}
	return u, err
}

func (c crashIdentity) CreateApplicationCredential(ctx context.Context, userID string, opts applicationcredentials.CreateOpts) (*applicationcredentials.ApplicationCredential, error) {
	a, err := c.Identity.CreateApplicationCredential(ctx, userID, opts)
	if err == nil {
		if err := afterCreate(opts.Name); err != nil {
			return nil, err
		}
	}
	return a, err
}
