// Package chassisset observes the Southbound chassis of a pool or an
// availability zone. It writes nothing.
package chassisset

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/c5c3/consumer-plane/apis/ovn/v1alpha1"
	"github.com/c5c3/consumer-plane/provider/internal/clients/ovn"
	"github.com/c5c3/consumer-plane/provider/internal/clients/ovn/sbdb"
	pcontroller "github.com/c5c3/consumer-plane/provider/internal/controller"
	"github.com/c5c3/consumer-plane/provider/internal/controller/providerconfig"
	"github.com/c5c3/consumer-plane/provider/internal/terminal"
)

// Setup adds the ChassisSet controller.
func Setup(mgr ctrl.Manager, o controller.Options, pc providerconfig.OVN) error {
	return pcontroller.SetupManaged(mgr, o, v1alpha1.SchemeGroupVersion.WithKind("ChassisSet"), &v1alpha1.ChassisSetList{},
		managed.WithTypedExternalConnector[*v1alpha1.ChassisSet](providerconfig.Connector[*v1alpha1.ChassisSet, *ovn.Conn]{Client: pc.Conn,
			External: func(c *ovn.Conn) managed.TypedExternalClient[*v1alpha1.ChassisSet] { return &external{conn: c} }}))
}

// external queries the Southbound chassis; the set is a view and writes nothing.
type external struct {
	pcontroller.View[*v1alpha1.ChassisSet]
	conn *ovn.Conn
}

// Observe always finds the set (it is a query, possibly empty) until the
// resource is deleted; nothing is ever created, updated or deleted.
func (e *external) Observe(ctx context.Context, mg *v1alpha1.ChassisSet) (managed.ExternalObservation, error) {
	if meta.WasDeleted(mg) {
		return managed.ExternalObservation{}, nil
	}
	if e.conn.SB == nil {
		return managed.ExternalObservation{}, terminal.Wrap(fmt.Errorf("the ProviderConfig has no spec.southbound: a ChassisSet reads the OVN Southbound database"))
	}
	var all []sbdb.Chassis
	if err := e.conn.SB.Select(ctx, &all); err != nil {
		return managed.ExternalObservation{}, err
	}
	var encaps []sbdb.Encap
	if err := e.conn.SB.Select(ctx, &encaps); err != nil {
		return managed.ExternalObservation{}, err
	}
	encapIP := make(map[string]string, len(encaps))
	for _, enc := range encaps {
		encapIP[enc.UUID] = enc.IP
	}
	p := mg.Spec.ForProvider
	obs := v1alpha1.ChassisSetObservation{}
	for _, c := range all {
		zones := Zones(c)
		if !slices.Contains(p.Names, c.Name) && !slices.Contains(p.Names, c.Hostname) && !intersects(zones, p.AvailabilityZones) {
			continue
		}
		oc := v1alpha1.ObservedChassis{Name: c.Name, Hostname: c.Hostname, AvailabilityZones: zones, Gateway: gateway(c)}
		for _, uuid := range c.Encaps {
			if ip, ok := encapIP[uuid]; ok {
				oc.EncapIPs = append(oc.EncapIPs, ip)
			}
		}
		sort.Strings(oc.EncapIPs)
		obs.Chassis = append(obs.Chassis, oc)
	}
	sort.Slice(obs.Chassis, func(i, j int) bool { return obs.Chassis[i].Name < obs.Chassis[j].Name })
	obs.Count = int32(len(obs.Chassis))
	mg.Status.AtProvider = obs
	if obs.Count >= p.MinChassis {
		mg.SetConditions(xpv2.Available())
	} else {
		mg.SetConditions(xpv2.Unavailable().WithMessage(fmt.Sprintf("%d chassis registered, spec.forProvider.minChassis is %d", obs.Count, p.MinChassis)))
	}
	if meta.GetExternalName(mg) == "" {
		// Nothing external to name; the resource's own name says what it is.
		meta.SetExternalName(mg, mg.GetName())
		return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true, ResourceLateInitialized: true}, nil
	}
	return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
}

// Zones are the availability zones a chassis announces in ovn-cms-options
// (other_config; external_ids on OVN before 22.09), as Neutron reads them.
func Zones(c sbdb.Chassis) []string {
	opts := c.OtherConfig["ovn-cms-options"]
	if opts == "" {
		opts = c.ExternalIDs["ovn-cms-options"]
	}
	for _, o := range strings.Split(opts, ",") {
		if z, ok := strings.CutPrefix(strings.TrimSpace(o), "availability-zones="); ok && z != "" {
			return strings.Split(z, ":")
		}
	}
	return nil
}

func gateway(c sbdb.Chassis) bool {
	opts := c.OtherConfig["ovn-cms-options"] + "," + c.ExternalIDs["ovn-cms-options"]
	return slices.Contains(strings.Split(opts, ","), "enable-chassis-as-gw")
}

func intersects(a, b []string) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return true
		}
	}
	return false
}
