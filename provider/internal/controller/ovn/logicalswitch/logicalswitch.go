// Package logicalswitch reconciles OVN Northbound logical switches for
// infrastructure networks.
package logicalswitch

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

var kind = row.Kind[*nbdb.LogicalSwitch]{
	Table: nbdb.LogicalSwitchTable, What: "OVN logical switch",
	UUID:        func(m *nbdb.LogicalSwitch) string { return m.UUID },
	Name:        func(m *nbdb.LogicalSwitch) string { return m.Name },
	ExternalIDs: func(m *nbdb.LogicalSwitch) map[string]string { return m.ExternalIDs },
	WithUUID:    func(uuid string) *nbdb.LogicalSwitch { return &nbdb.LogicalSwitch{UUID: uuid} },
}

// Setup adds the LogicalSwitch controller.
func Setup(mgr ctrl.Manager, o controller.Options, pc providerconfig.OVN) error {
	return pcontroller.SetupManaged(mgr, o, v1alpha1.SchemeGroupVersion.WithKind("LogicalSwitch"), &v1alpha1.LogicalSwitchList{},
		managed.WithTypedExternalConnector[*v1alpha1.LogicalSwitch](row.Connector[*v1alpha1.LogicalSwitch]{OVN: pc,
			External: func(c *ovn.Conn) managed.TypedExternalClient[*v1alpha1.LogicalSwitch] { return &external{conn: c} }}))
}

type external struct{ conn *ovn.Conn }

// desired is the row the spec asks for, built on the observed one.
func desired(mg *v1alpha1.LogicalSwitch, observed *nbdb.LogicalSwitch) *nbdb.LogicalSwitch {
	p := mg.Spec.ForProvider
	want := *observed
	oc, record := ovn.Merge("other_config", observed.OtherConfig, p.OtherConfig, observed.ExternalIDs)
	want.OtherConfig = oc
	want.ExternalIDs = ovn.RowExternalIDs(observed.ExternalIDs, p.ExternalIDs, mg.GetName())
	ovn.SetOwnedKeys(want.ExternalIDs, "other_config", record)
	return &want
}

func (e *external) Observe(ctx context.Context, mg *v1alpha1.LogicalSwitch) (managed.ExternalObservation, error) {
	observed, adopted, err := kind.Lookup(ctx, e.conn.NB, mg, mg.Spec.ForProvider.Name)
	if err != nil || row.IsNil(observed) {
		return managed.ExternalObservation{}, err
	}
	mg.Status.AtProvider = v1alpha1.DatapathObservation{UUID: observed.UUID, Ports: int32(len(observed.Ports)),
		TunnelKey: row.TunnelKey(ctx, e.conn.SB, "logical-switch", observed.UUID)}
	mg.SetConditions(xpv2.Available())
	want := desired(mg, observed)
	upToDate := maps.Equal(want.OtherConfig, observed.OtherConfig) && maps.Equal(want.ExternalIDs, observed.ExternalIDs)
	return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: upToDate, ResourceLateInitialized: adopted}, nil
}

func (e *external) Create(ctx context.Context, mg *v1alpha1.LogicalSwitch) (managed.ExternalCreation, error) {
	ls := desired(mg, &nbdb.LogicalSwitch{UUID: "ls", Name: mg.Spec.ForProvider.Name})
	return managed.ExternalCreation{}, kind.Create(ctx, e.conn.NB, mg, ls.Name, ls)
}

func (e *external) Update(ctx context.Context, mg *v1alpha1.LogicalSwitch) (managed.ExternalUpdate, error) {
	observed, _, err := kind.Lookup(ctx, e.conn.NB, mg, mg.Spec.ForProvider.Name)
	if err != nil || row.IsNil(observed) {
		return managed.ExternalUpdate{}, err
	}
	want := desired(mg, observed)
	return managed.ExternalUpdate{}, kind.Update(ctx, e.conn.NB, want, &want.OtherConfig, &want.ExternalIDs)
}

// Delete refuses while ports are attached: deleting the switch would take
// their Logical_Switch_Port rows with it.
func (e *external) Delete(ctx context.Context, mg *v1alpha1.LogicalSwitch) (managed.ExternalDelete, error) {
	mg.SetConditions(xpv2.Deleting())
	return managed.ExternalDelete{}, row.DeleteUnlessInUse(ctx, kind, e.conn.NB, mg, mg.Spec.ForProvider.Name,
		func(m *nbdb.LogicalSwitch) int { return len(m.Ports) })
}

func (e *external) Disconnect(context.Context) error { return nil }
