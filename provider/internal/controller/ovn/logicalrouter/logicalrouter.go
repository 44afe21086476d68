// Package logicalrouter reconciles OVN Northbound logical routers for
// infrastructure networks: name, enabled and options; ports, routes and
// NAT are left to whoever attaches them.
package logicalrouter

import (
	"context"
	"maps"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/c5c3/consumer-plane/apis/ovn/v1alpha1"
	"github.com/c5c3/consumer-plane/provider/internal/clients/ovn"
	"github.com/c5c3/consumer-plane/provider/internal/clients/ovn/nbdb"
	pcontroller "github.com/c5c3/consumer-plane/provider/internal/controller"
	"github.com/c5c3/consumer-plane/provider/internal/controller/ovn/row"
	"github.com/c5c3/consumer-plane/provider/internal/controller/providerconfig"
)

var kind = row.Kind[*nbdb.LogicalRouter]{
	Table: nbdb.LogicalRouterTable, What: "OVN logical router",
	UUID:        func(m *nbdb.LogicalRouter) string { return m.UUID },
	Name:        func(m *nbdb.LogicalRouter) string { return m.Name },
	ExternalIDs: func(m *nbdb.LogicalRouter) map[string]string { return m.ExternalIDs },
	WithUUID:    func(uuid string) *nbdb.LogicalRouter { return &nbdb.LogicalRouter{UUID: uuid} },
}

// Setup adds the LogicalRouter controller.
func Setup(mgr ctrl.Manager, o controller.Options, pc providerconfig.OVN) error {
	return pcontroller.SetupManaged(mgr, o, v1alpha1.SchemeGroupVersion.WithKind("LogicalRouter"), &v1alpha1.LogicalRouterList{},
		managed.WithTypedExternalConnector[*v1alpha1.LogicalRouter](row.Connector[*v1alpha1.LogicalRouter]{OVN: pc,
			External: func(c *ovn.Conn) managed.TypedExternalClient[*v1alpha1.LogicalRouter] { return &external{conn: c} }}))
}

type external struct{ conn *ovn.Conn }

// desired is the row the spec asks for, built on the observed one.
func desired(mg *v1alpha1.LogicalRouter, observed *nbdb.LogicalRouter) *nbdb.LogicalRouter {
	p := mg.Spec.ForProvider
	want := *observed
	opts, record := ovn.Merge("options", observed.Options, p.Options, observed.ExternalIDs)
	want.Options = opts
	want.Enabled = p.Enabled
	want.ExternalIDs = ovn.RowExternalIDs(observed.ExternalIDs, p.ExternalIDs, mg.GetName())
	ovn.SetOwnedKeys(want.ExternalIDs, "options", record)
	return &want
}

func (e *external) Observe(ctx context.Context, mg *v1alpha1.LogicalRouter) (managed.ExternalObservation, error) {
	observed, adopted, err := kind.Lookup(ctx, e.conn.NB, mg, mg.Spec.ForProvider.Name)
	if err != nil || row.IsNil(observed) {
		return managed.ExternalObservation{}, err
	}
	mg.Status.AtProvider = v1alpha1.DatapathObservation{UUID: observed.UUID, Ports: int32(len(observed.Ports)),
		TunnelKey: row.TunnelKey(ctx, e.conn.SB, "logical-router", observed.UUID)}
	mg.SetConditions(xpv2.Available())
	want := desired(mg, observed)
	upToDate := maps.Equal(want.Options, observed.Options) && maps.Equal(want.ExternalIDs, observed.ExternalIDs) &&
		enabled(want.Enabled) == enabled(observed.Enabled)
	return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: upToDate, ResourceLateInitialized: adopted}, nil
}

func (e *external) Create(ctx context.Context, mg *v1alpha1.LogicalRouter) (managed.ExternalCreation, error) {
	ls := desired(mg, &nbdb.LogicalRouter{UUID: "ls", Name: mg.Spec.ForProvider.Name})
	return managed.ExternalCreation{}, kind.Create(ctx, e.conn.NB, mg, ls.Name, ls)
}

func (e *external) Update(ctx context.Context, mg *v1alpha1.LogicalRouter) (managed.ExternalUpdate, error) {
	observed, _, err := kind.Lookup(ctx, e.conn.NB, mg, mg.Spec.ForProvider.Name)
	if err != nil || row.IsNil(observed) {
		return managed.ExternalUpdate{}, err
	}
	want := desired(mg, observed)
	return managed.ExternalUpdate{}, kind.Update(ctx, e.conn.NB, want, &want.Options, &want.Enabled, &want.ExternalIDs)
}

// Delete refuses while ports are attached: deleting the router would take
// its Logical_Router_Port rows with it.
func (e *external) Delete(ctx context.Context, mg *v1alpha1.LogicalRouter) (managed.ExternalDelete, error) {
	mg.SetConditions(xpv2.Deleting())
	return managed.ExternalDelete{}, row.DeleteUnlessInUse(ctx, kind, e.conn.NB, mg, mg.Spec.ForProvider.Name,
		func(m *nbdb.LogicalRouter) int { return len(m.Ports) })
}

func (e *external) Disconnect(context.Context) error { return nil }

// enabled reads OVN's optional enabled column: unset means enabled.
func enabled(b *bool) bool { return b == nil || *b }
