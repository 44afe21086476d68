package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/config/clouds"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/endpoints"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/regions"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/services"
)

// computeTypes are the catalog types of what the c5c3 ControlPlane does not
// deploy yet (Nova, Cinder, Neutron): a region gets them only when the
// landscape setting -compute-regions names it.
var computeTypes = map[string]bool{"compute": true, "volume": true, "volumev2": true, "volumev3": true, "block-storage": true, "network": true}

// registerRegion gives the local Keystone's catalog the cloud's region, as
// the c5c3-operator's Keystone bootstrap registers a cloud's services in
// the cloud's region: the endpoints of the local OpenStack's own region
// again under region — of the services the ControlPlane deploys (Keystone,
// Placement, Glance when there is one), and of Nova, Cinder and Neutron only
// when compute is true (-compute-regions, standing in for an operator that
// deploys compute). A region registered before with another setting is
// brought to this one. Clients of the cloud (the provider) then find their
// endpoints in the region the cloud was claimed for.
func (s *standin) registerRegion(ctx context.Context, region string, compute bool) error {
	s.regionsMu.Lock()
	defer s.regionsMu.Unlock()
	if region == "" || s.regions[region] {
		return nil
	}
	auth, eo, tlsCfg, err := clouds.Parse(clouds.WithCloudsYAML(bytes.NewReader(s.clouds)), clouds.WithCloudName("admin"))
	if err != nil {
		return fmt.Errorf("the local OpenStack's clouds.yaml: %w", err)
	}
	pc, err := openstack.NewClient(auth.IdentityEndpoint)
	if err != nil {
		return err
	}
	if tlsCfg != nil {
		// The local OpenStack's CA (the clouds.yaml's cacert).
		pc.HTTPClient = http.Client{Transport: &http.Transport{TLSClientConfig: tlsCfg}}
	}
	if err := openstack.Authenticate(ctx, pc, auth); err != nil {
		return fmt.Errorf("cannot authenticate to the local Keystone: %w", err)
	}
	id, err := openstack.NewIdentityV3(pc, gophercloud.EndpointOpts{Region: eo.Region})
	if err != nil {
		return err
	}
	if _, err := regions.Get(ctx, id, region).Extract(); gophercloud.ResponseCodeIs(err, 404) {
		if _, err := regions.Create(ctx, id, regions.CreateOpts{ID: region, Description: "registered by operator-standin"}).Extract(); err != nil {
			return fmt.Errorf("cannot create region %s: %w", region, err)
		}
	} else if err != nil {
		return err
	}
	pages, err := services.List(id, services.ListOpts{}).AllPages(ctx)
	if err != nil {
		return err
	}
	svcs, err := services.ExtractServices(pages)
	if err != nil {
		return err
	}
	typeOf := map[string]string{}
	for _, sv := range svcs {
		typeOf[sv.ID] = sv.Type
	}
	wanted := func(serviceID string) bool { return compute || !computeTypes[typeOf[serviceID]] }
	pages, err = endpoints.List(id, endpoints.ListOpts{}).AllPages(ctx)
	if err != nil {
		return err
	}
	all, err := endpoints.ExtractEndpoints(pages)
	if err != nil {
		return err
	}
	type key struct{ service, iface string }
	have := map[key]bool{}
	for _, e := range all {
		if e.Region != region {
			continue
		}
		if !wanted(e.ServiceID) {
			if err := endpoints.Delete(ctx, id, e.ID).ExtractErr(); err != nil {
				return fmt.Errorf("cannot remove %s endpoint %s from region %s: %w", typeOf[e.ServiceID], e.URL, region, err)
			}
			continue
		}
		have[key{e.ServiceID, string(e.Availability)}] = true
	}
	var registered []string
	for _, e := range all {
		if e.Region != eo.Region || !wanted(e.ServiceID) {
			continue
		}
		if e.Availability == gophercloud.AvailabilityPublic {
			registered = append(registered, typeOf[e.ServiceID])
		}
		if have[key{e.ServiceID, string(e.Availability)}] {
			continue
		}
		if _, err := endpoints.Create(ctx, id, endpoints.CreateOpts{
			Availability: e.Availability, Region: region, URL: e.URL, ServiceID: e.ServiceID,
		}).Extract(); err != nil {
			return fmt.Errorf("cannot register %s endpoint %s in region %s: %w", e.Availability, e.URL, region, err)
		}
		have[key{e.ServiceID, string(e.Availability)}] = true
	}
	s.regions[region] = true
	fmt.Printf("region %s registered in the local Keystone: %v\n", region, registered)
	return nil
}
