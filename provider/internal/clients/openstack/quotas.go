package openstack

import (
	"context"
	"encoding/json"
	"fmt"

	volumequotas "github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/quotasets"
	computequotas "github.com/gophercloud/gophercloud/v2/openstack/compute/v2/quotasets"
	networkquotas "github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/quotas"
)

// Quotas reads and writes one service's quota set of a project, keyed by
// the service's own quota names (Nova "cores", Cinder "gigabytes", Neutron
// "network"...). The three services name and nest quotas differently; the
// QuotaSet controllers only differ in which names they manage.
type Quotas interface {
	Get(ctx context.Context, projectID string) (map[string]int64, error)
	Update(ctx context.Context, projectID string, limits map[string]int64) error
	// Reset returns the project to the cloud's default quotas.
	Reset(ctx context.Context, projectID string) error
}

// NewComputeQuotas returns Nova's quotas of a session.
func NewComputeQuotas(s *Session) (Quotas, error) {
	sc, err := s.Service(ServiceCompute)
	if err != nil {
		return nil, err
	}
	return quotas{
		get: func(ctx context.Context, p string) (any, error) { return computequotas.Get(ctx, sc, p).Extract() },
		update: updateFrom(func(ctx context.Context, p string, o computequotas.UpdateOpts) error {
			return computequotas.Update(ctx, sc, p, o).Err
		}),
		reset: func(ctx context.Context, p string) error { return computequotas.Delete(ctx, sc, p).Err },
	}, nil
}

// NewVolumeQuotas returns Cinder's quotas of a session.
func NewVolumeQuotas(s *Session) (Quotas, error) {
	sc, err := s.Service(ServiceBlockStorage)
	if err != nil {
		return nil, err
	}
	return quotas{
		get: func(ctx context.Context, p string) (any, error) { return volumequotas.Get(ctx, sc, p).Extract() },
		update: updateFrom(func(ctx context.Context, p string, o volumequotas.UpdateOpts) error {
			return volumequotas.Update(ctx, sc, p, o).Err
		}),
		reset: func(ctx context.Context, p string) error { return volumequotas.Delete(ctx, sc, p).ExtractErr() },
	}, nil
}

// NewNetworkQuotas returns Neutron's quotas of a session.
func NewNetworkQuotas(s *Session) (Quotas, error) {
	sc, err := s.Service(ServiceNetwork)
	if err != nil {
		return nil, err
	}
	return quotas{
		get: func(ctx context.Context, p string) (any, error) { return networkquotas.Get(ctx, sc, p).Extract() },
		update: updateFrom(func(ctx context.Context, p string, o networkquotas.UpdateOpts) error {
			return networkquotas.Update(ctx, sc, p, o).Err
		}),
		reset: func(ctx context.Context, p string) error { return networkquotas.Delete(ctx, sc, p).ExtractErr() },
	}, nil
}

// updateFrom adapts a service's typed update to quota names: the limits
// JSON decodes into the service's UpdateOpts, whose tags are its names.
func updateFrom[O any](update func(ctx context.Context, projectID string, opts O) error) func(context.Context, string, []byte) error {
	return func(ctx context.Context, projectID string, body []byte) error {
		var opts O
		if err := json.Unmarshal(body, &opts); err != nil {
			return err
		}
		return update(ctx, projectID, opts)
	}
}

// quotas converts between a service's typed quota structs and names: the
// gophercloud types carry the service's JSON names as tags.
type quotas struct {
	get    func(ctx context.Context, projectID string) (any, error)
	update func(ctx context.Context, projectID string, body []byte) error
	reset  func(ctx context.Context, projectID string) error
}

func (q quotas) Get(ctx context.Context, projectID string) (map[string]int64, error) {
	qs, err := q.get(ctx, projectID)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(qs)
	if err != nil {
		return nil, err
	}
	raw := map[string]any{}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, err
	}
	limits := map[string]int64{}
	for k, v := range raw {
		if n, ok := v.(float64); ok {
			limits[k] = int64(n)
		}
	}
	return limits, nil
}

func (q quotas) Update(ctx context.Context, projectID string, limits map[string]int64) error {
	b, err := json.Marshal(limits)
	if err != nil {
		return err
	}
	if err := q.update(ctx, projectID, b); err != nil {
		return fmt.Errorf("setting %v: %w", limits, err)
	}
	return nil
}

func (q quotas) Reset(ctx context.Context, projectID string) error {
	return q.reset(ctx, projectID)
}
