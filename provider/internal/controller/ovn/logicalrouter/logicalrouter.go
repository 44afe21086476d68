// Package logicalrouter reconciles OVN Northbound logical routers for
// infrastructure networks: enabled, options and external_ids; ports,
// routes and NAT are left to whoever attaches them.
package logicalrouter

import (
	"maps"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/c5c3/consumer-plane/apis/ovn/v1alpha1"
	"github.com/c5c3/consumer-plane/provider/internal/clients/ovn"
	"github.com/c5c3/consumer-plane/provider/internal/clients/ovn/nbdb"
	pcontroller "github.com/c5c3/consumer-plane/provider/internal/controller"
	"github.com/c5c3/consumer-plane/provider/internal/controller/ovn/row"
	"github.com/c5c3/consumer-plane/provider/internal/controller/providerconfig"
)

type routerRow = *nbdb.LogicalRouter

var kind = row.Kind[routerRow]{
	Table: nbdb.LogicalRouterTable, What: "OVN logical router",
	UUID:        func(m routerRow) string { return m.UUID },
	Name:        func(m routerRow) string { return m.Name },
	ExternalIDs: func(m routerRow) map[string]string { return m.ExternalIDs },
	WithUUID:    func(uuid string) routerRow { return &nbdb.LogicalRouter{UUID: uuid} },
}

// Setup adds the LogicalRouter controller.
func Setup(mgr ctrl.Manager, o controller.Options, pc providerconfig.OVN) error {
	return pcontroller.SetupManaged(mgr, o, v1alpha1.SchemeGroupVersion.WithKind("LogicalRouter"), &v1alpha1.LogicalRouterList{},
		managed.WithTypedExternalConnector[*v1alpha1.LogicalRouter](providerconfig.Connector[*v1alpha1.LogicalRouter, *ovn.Conn]{Client: pc.Conn, External: external}))
}

func external(c *ovn.Conn) managed.TypedExternalClient[*v1alpha1.LogicalRouter] {
	return row.Datapath[*v1alpha1.LogicalRouter, routerRow]{
		Kind: kind, Conn: c, SBKey: "logical-router",
		Name:    func(mg *v1alpha1.LogicalRouter) string { return mg.Spec.ForProvider.Name },
		New:     func(name string) routerRow { return &nbdb.LogicalRouter{UUID: "new", Name: name} },
		Desired: desired,
		Equal: func(want, observed routerRow) bool {
			return maps.Equal(want.Options, observed.Options) && maps.Equal(want.ExternalIDs, observed.ExternalIDs) &&
				enabled(want.Enabled) == enabled(observed.Enabled)
		},
		Columns:  func(m routerRow) []any { return []any{&m.Options, &m.Enabled, &m.ExternalIDs} },
		Ports:    func(m routerRow) int { return len(m.Ports) },
		Observed: func(mg *v1alpha1.LogicalRouter, o v1alpha1.DatapathObservation) { mg.Status.AtProvider = o },
	}
}

// desired is the row the spec asks for, built on the observed one.
func desired(mg *v1alpha1.LogicalRouter, observed routerRow) routerRow {
	p := mg.Spec.ForProvider
	want := *observed
	opts, record := ovn.Merge("options", observed.Options, p.Options, observed.ExternalIDs)
	want.Options = opts
	want.Enabled = p.Enabled
	want.ExternalIDs = ovn.RowExternalIDs(observed.ExternalIDs, p.ExternalIDs, mg.GetName())
	ovn.SetOwnedKeys(want.ExternalIDs, "options", record)
	return &want
}

// enabled reads OVN's optional enabled column: unset means enabled.
func enabled(b *bool) bool { return b == nil || *b }
