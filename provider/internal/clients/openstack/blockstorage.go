package openstack

import (
	"context"
	"sort"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/services"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumetypes"
)

// BlockStorage is what the Cinder volume type controller needs. Cinder
// enforces unique volume type names, so FindVolumeType returns at most one.
type BlockStorage interface {
	GetVolumeType(ctx context.Context, id string) (*volumetypes.VolumeType, error)
	FindVolumeType(ctx context.Context, name string) (*volumetypes.VolumeType, error)
	CreateVolumeType(ctx context.Context, opts volumetypes.CreateOpts) (*volumetypes.VolumeType, error)
	UpdateVolumeType(ctx context.Context, id string, opts volumetypes.UpdateOpts) (*volumetypes.VolumeType, error)
	DeleteVolumeType(ctx context.Context, id string) error
	SetExtraSpecs(ctx context.Context, id string, specs map[string]string) error
	DeleteExtraSpec(ctx context.Context, id, key string) error
	ListAccess(ctx context.Context, id string) ([]string, error)
	AddAccess(ctx context.Context, id, projectID string) error
	RemoveAccess(ctx context.Context, id, projectID string) error
	// Backends are the backend names cinder-volume services serve: the
	// part after "@" of their host ("host@backend"), sorted.
	Backends(ctx context.Context) ([]string, error)
}

// NewBlockStorage returns the Cinder client of a session.
func NewBlockStorage(s *Session) (BlockStorage, error) {
	sc, err := s.Service(ServiceBlockStorage)
	if err != nil {
		return nil, err
	}
	return blockStorage{sc: sc}, nil
}

type blockStorage struct{ sc *gophercloud.ServiceClient }

func (c blockStorage) GetVolumeType(ctx context.Context, id string) (*volumetypes.VolumeType, error) {
	return volumetypes.Get(ctx, c.sc, id).Extract()
}

func (c blockStorage) FindVolumeType(ctx context.Context, name string) (*volumetypes.VolumeType, error) {
	// is_public=None lists private types too (admin only).
	pages, err := volumetypes.List(c.sc, volumetypes.ListOpts{IsPublic: volumetypes.VisibilityDefault}).AllPages(ctx)
	if err != nil {
		return nil, err
	}
	all, err := volumetypes.ExtractVolumeTypes(pages)
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

func (c blockStorage) CreateVolumeType(ctx context.Context, opts volumetypes.CreateOpts) (*volumetypes.VolumeType, error) {
	return volumetypes.Create(ctx, c.sc, opts).Extract()
}

func (c blockStorage) UpdateVolumeType(ctx context.Context, id string, opts volumetypes.UpdateOpts) (*volumetypes.VolumeType, error) {
	return volumetypes.Update(ctx, c.sc, id, opts).Extract()
}

func (c blockStorage) DeleteVolumeType(ctx context.Context, id string) error {
	return volumetypes.Delete(ctx, c.sc, id).ExtractErr()
}

func (c blockStorage) SetExtraSpecs(ctx context.Context, id string, specs map[string]string) error {
	_, err := volumetypes.CreateExtraSpecs(ctx, c.sc, id, volumetypes.ExtraSpecsOpts(specs)).Extract()
	return err
}

func (c blockStorage) DeleteExtraSpec(ctx context.Context, id, key string) error {
	return volumetypes.DeleteExtraSpec(ctx, c.sc, id, key).ExtractErr()
}

func (c blockStorage) ListAccess(ctx context.Context, id string) ([]string, error) {
	pages, err := volumetypes.ListAccesses(c.sc, id).AllPages(ctx)
	if err != nil {
		return nil, err
	}
	all, err := volumetypes.ExtractAccesses(pages)
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(all))
	for _, a := range all {
		ids = append(ids, a.ProjectID)
	}
	sort.Strings(ids)
	return ids, nil
}

func (c blockStorage) AddAccess(ctx context.Context, id, projectID string) error {
	return volumetypes.AddAccess(ctx, c.sc, id, volumetypes.AddAccessOpts{Project: projectID}).ExtractErr()
}

func (c blockStorage) RemoveAccess(ctx context.Context, id, projectID string) error {
	return volumetypes.RemoveAccess(ctx, c.sc, id, volumetypes.RemoveAccessOpts{Project: projectID}).ExtractErr()
}

func (c blockStorage) Backends(ctx context.Context) ([]string, error) {
	pages, err := services.List(c.sc, services.ListOpts{Binary: "cinder-volume"}).AllPages(ctx)
	if err != nil {
		return nil, err
	}
	all, err := services.ExtractServices(pages)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, s := range all {
		if _, backend, ok := strings.Cut(s.Host, "@"); ok {
			seen[backend] = true
		}
	}
	backends := make([]string, 0, len(seen))
	for b := range seen {
		backends = append(backends, b)
	}
	sort.Strings(backends)
	return backends, nil
}
