// Package logicalswitch reconciles OVN Northbound logical switches for
// infrastructure networks: other_config and external_ids; ports are left
// to whoever attaches them.
package logicalswitch

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

type switchRow = *nbdb.LogicalSwitch

var kind = row.Kind[switchRow]{
	Table: nbdb.LogicalSwitchTable, What: "OVN logical switch",
	UUID:        func(m switchRow) string { return m.UUID },
	Name:        func(m switchRow) string { return m.Name },
	ExternalIDs: func(m switchRow) map[string]string { return m.ExternalIDs },
	WithUUID:    func(uuid string) switchRow { return &nbdb.LogicalSwitch{UUID: uuid} },
}

// Setup adds the LogicalSwitch controller.
func Setup(mgr ctrl.Manager, o controller.Options, pc providerconfig.OVN) error {
	return pcontroller.SetupManaged(mgr, o, v1alpha1.SchemeGroupVersion.WithKind("LogicalSwitch"), &v1alpha1.LogicalSwitchList{},
		managed.WithTypedExternalConnector[*v1alpha1.LogicalSwitch](providerconfig.Connector[*v1alpha1.LogicalSwitch, *ovn.Conn]{Client: pc.Conn, External: external}))
}

func external(c *ovn.Conn) managed.TypedExternalClient[*v1alpha1.LogicalSwitch] {
	return row.Datapath[*v1alpha1.LogicalSwitch, switchRow]{
		Kind: kind, Conn: c, SBKey: "logical-switch",
		Name:    func(mg *v1alpha1.LogicalSwitch) string { return mg.Spec.ForProvider.Name },
		New:     func(name string) switchRow { return &nbdb.LogicalSwitch{UUID: "new", Name: name} },
		Desired: desired,
		Equal: func(want, observed switchRow) bool {
			return maps.Equal(want.OtherConfig, observed.OtherConfig) && maps.Equal(want.ExternalIDs, observed.ExternalIDs)
		},
		Columns:  func(m switchRow) []any { return []any{&m.OtherConfig, &m.ExternalIDs} },
		Ports:    func(m switchRow) int { return len(m.Ports) },
		Observed: func(mg *v1alpha1.LogicalSwitch, o v1alpha1.DatapathObservation) { mg.Status.AtProvider = o },
	}
}

// desired is the row the spec asks for, built on the observed one: the
// spec's other_config keys and external IDs merged in, ownership marked.
func desired(mg *v1alpha1.LogicalSwitch, observed switchRow) switchRow {
	p := mg.Spec.ForProvider
	want := *observed
	oc, record := ovn.Merge("other_config", observed.OtherConfig, p.OtherConfig, observed.ExternalIDs)
	want.OtherConfig = oc
	want.ExternalIDs = ovn.RowExternalIDs(observed.ExternalIDs, p.ExternalIDs, mg.GetName())
	ovn.SetOwnedKeys(want.ExternalIDs, "other_config", record)
	return &want
}
