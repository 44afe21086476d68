package integration

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/endpoints"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/regions"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/services"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	openstackv1alpha1 "github.com/c5c3/consumer-plane/apis/openstack/v1alpha1"
	"github.com/c5c3/consumer-plane/provider/internal/clients/openstack"
)

// TestIntegrationCatalog: an OpenStack ProviderConfig reports which
// services the cloud's Keystone catalog serves in its region. The local
// OpenStack's region has Nova, Cinder and Neutron; a region the test
// registers with Keystone's endpoint alone is a cloud without compute (the
// c5c3 ControlPlane deploys no Nova yet); a region with no endpoint serves
// nothing; wrong credentials are said in CatalogRead.
func TestIntegrationCatalog(t *testing.T) {
	h := withOpenStack(t)
	ctx := context.Background()
	id, err := h.cloud.Service(openstack.ServiceIdentity)
	if err != nil {
		t.Fatal(err)
	}
	// A region whose catalog has only Keystone.
	region := h.name("identity-only")
	if _, err := regions.Create(ctx, id, regions.CreateOpts{ID: region}).Extract(); err != nil {
		t.Fatalf("cannot create region %s: %v", region, err)
	}
	t.Cleanup(func() { _ = regions.Delete(context.Background(), id, region).ExtractErr() })
	pages, err := services.List(id, services.ListOpts{ServiceType: "identity"}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	svcs, err := services.ExtractServices(pages)
	if err != nil || len(svcs) == 0 {
		t.Fatalf("no identity service in the local Keystone: %v", err)
	}
	ep, err := endpoints.Create(ctx, id, endpoints.CreateOpts{Availability: gophercloud.AvailabilityPublic, Region: region,
		URL: keystoneURL, ServiceID: svcs[0].ID}).Extract()
	if err != nil {
		t.Fatalf("cannot register Keystone in region %s: %v", region, err)
	}
	t.Cleanup(func() { _ = endpoints.Delete(context.Background(), id, ep.ID).ExtractErr() })
	identityOnly := h.name("identity-only")
	h.create(t, cloudsYAMLConfig(identityOnly, "crossplane-system", "cloud-admin", region))
	t.Cleanup(func() { _ = h.kube.Delete(context.Background(), cloudsYAMLConfig(identityOnly, "", "", "")) })

	catalog := func(name string) (*openstackv1alpha1.ProviderConfig, error) {
		pc := &openstackv1alpha1.ProviderConfig{}
		return pc, h.kube.Get(ctx, client.ObjectKey{Name: name}, pc)
	}
	hasServices := func(name, region string, want func([]string) bool) func() (bool, string) {
		return func() (bool, string) {
			pc, err := catalog(name)
			if err != nil {
				return false, err.Error()
			}
			c := pc.Status.Catalog
			if c == nil {
				return false, fmt.Sprintf("no status.catalog; CatalogRead: %s", pc.GetCondition(openstackv1alpha1.ConditionCatalogRead).Message)
			}
			return c.Region == region && want(c.Services) && pc.GetCondition(openstackv1alpha1.ConditionCatalogRead).Status == corev1.ConditionTrue,
				fmt.Sprintf("region %q, services %v", c.Region, c.Services)
		}
	}
	eventually(t, "the local region serves compute, block storage, network and identity", hasServices(pcLocal, "RegionOne", func(s []string) bool {
		return slices.Contains(s, "compute") && slices.Contains(s, "network") && slices.Contains(s, "identity") &&
			(slices.Contains(s, "volumev3") || slices.Contains(s, "block-storage"))
	}))
	eventually(t, "a region with Keystone alone serves identity only", hasServices(identityOnly, region, func(s []string) bool {
		return slices.Equal(s, []string{"identity"})
	}))
	eventually(t, "a region without endpoints serves nothing", hasServices(pcWrongRegion, "RegionX", func(s []string) bool { return len(s) == 0 }))
	eventually(t, "wrong credentials are said in CatalogRead", func() (bool, string) {
		pc, err := catalog(pcWrongCreds)
		if err != nil {
			return false, err.Error()
		}
		c := pc.GetCondition(openstackv1alpha1.ConditionCatalogRead)
		return c.Status == corev1.ConditionFalse && c.Reason == xpv2.ConditionReason("ReadFailed") && strings.Contains(strings.ToLower(c.Message), "credential"), c.Message
	})
}
