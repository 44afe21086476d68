// Package hachassisgroup reconciles OVN Northbound HA chassis groups: the
// chassis, with priorities, that may host a pool's or an availability
// zone's gateway ports.
package hachassisgroup

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/ovn-org/libovsdb/model"
	"github.com/ovn-org/libovsdb/ovsdb"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/c5c3/consumer-plane/apis/ovn/v1alpha1"
	"github.com/c5c3/consumer-plane/provider/internal/clients/ovn"
	"github.com/c5c3/consumer-plane/provider/internal/clients/ovn/nbdb"
	"github.com/c5c3/consumer-plane/provider/internal/clients/ovn/sbdb"
	pcontroller "github.com/c5c3/consumer-plane/provider/internal/controller"
	"github.com/c5c3/consumer-plane/provider/internal/controller/ovn/row"
	"github.com/c5c3/consumer-plane/provider/internal/controller/providerconfig"
	"github.com/c5c3/consumer-plane/provider/internal/terminal"
)

var kind = row.Kind[*nbdb.HAChassisGroup]{
	Table: nbdb.HAChassisGroupTable, What: "OVN HA chassis group",
	UUID:        func(m *nbdb.HAChassisGroup) string { return m.UUID },
	Name:        func(m *nbdb.HAChassisGroup) string { return m.Name },
	ExternalIDs: func(m *nbdb.HAChassisGroup) map[string]string { return m.ExternalIDs },
	WithUUID:    func(uuid string) *nbdb.HAChassisGroup { return &nbdb.HAChassisGroup{UUID: uuid} },
}

// Setup adds the HAChassisGroup controller.
func Setup(mgr ctrl.Manager, o controller.Options, pc providerconfig.OVN) error {
	return pcontroller.SetupManaged(mgr, o, v1alpha1.SchemeGroupVersion.WithKind("HAChassisGroup"), &v1alpha1.HAChassisGroupList{},
		managed.WithTypedExternalConnector[*v1alpha1.HAChassisGroup](providerconfig.Connector[*v1alpha1.HAChassisGroup, *ovn.Conn]{Client: pc.Conn,
			External: func(c *ovn.Conn) managed.TypedExternalClient[*v1alpha1.HAChassisGroup] { return &external{conn: c} }}))
}

type external struct{ conn *ovn.Conn }

// members reads the group's HA_Chassis rows (in one round trip), by
// chassis name.
func (e *external) members(ctx context.Context, g *nbdb.HAChassisGroup) (map[string]*nbdb.HAChassis, error) {
	var all []*nbdb.HAChassis
	if err := e.conn.NB.SelectUUIDs(ctx, &all, g.HaChassis); err != nil {
		return nil, err
	}
	byUUID := make(map[string]*nbdb.HAChassis, len(all))
	for _, hc := range all {
		byUUID[hc.UUID] = hc
	}
	out := make(map[string]*nbdb.HAChassis, len(g.HaChassis))
	for _, uuid := range g.HaChassis {
		hc, ok := byUUID[uuid]
		if !ok {
			return nil, fmt.Errorf("HA_Chassis %s of group %q was deleted while being read; reading again", uuid, g.Name)
		}
		out[hc.ChassisName] = hc
	}
	return out, nil
}

func (e *external) Observe(ctx context.Context, mg *v1alpha1.HAChassisGroup) (managed.ExternalObservation, error) {
	p := mg.Spec.ForProvider
	observed, adopted, err := kind.Lookup(ctx, e.conn.NB, mg, p.Name)
	if err != nil || row.IsNil(observed) {
		return managed.ExternalObservation{}, err
	}
	members, err := e.members(ctx, observed)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	mg.Status.AtProvider = v1alpha1.HAChassisGroupObservation{UUID: observed.UUID, Members: byPriority(members)}
	mg.SetConditions(xpv2.Available())
	upToDate := len(members) == len(p.Chassis) &&
		maps.Equal(ovn.RowExternalIDs(observed.ExternalIDs, p.ExternalIDs, mg.GetName()), observed.ExternalIDs)
	for _, c := range p.Chassis {
		if m, ok := members[c.Name]; !ok || m.Priority != int(c.Priority) {
			upToDate = false
		}
	}
	return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: upToDate, ResourceLateInitialized: adopted}, nil
}

func (e *external) Create(ctx context.Context, mg *v1alpha1.HAChassisGroup) (managed.ExternalCreation, error) {
	p := mg.Spec.ForProvider
	if err := e.registered(ctx, p.Chassis); err != nil {
		return managed.ExternalCreation{}, err
	}
	g := &nbdb.HAChassisGroup{UUID: "group", Name: p.Name, ExternalIDs: ovn.RowExternalIDs(nil, p.ExternalIDs, mg.GetName())}
	models := []model.Model{g}
	for i, c := range p.Chassis {
		hc := &nbdb.HAChassis{UUID: fmt.Sprintf("hc%d", i), ChassisName: c.Name, Priority: int(c.Priority)}
		g.HaChassis = append(g.HaChassis, hc.UUID)
		models = append(models, hc)
	}
	return managed.ExternalCreation{}, kind.Create(ctx, e.conn.NB, mg, p.Name, models...)
}

// Update rewrites the members in one transaction: changed priorities in
// place, new members inserted, dropped ones unreferenced (OVSDB removes
// HA_Chassis rows no group references).
func (e *external) Update(ctx context.Context, mg *v1alpha1.HAChassisGroup) (managed.ExternalUpdate, error) {
	p := mg.Spec.ForProvider
	observed, _, err := kind.Lookup(ctx, e.conn.NB, mg, p.Name)
	if err != nil || row.IsNil(observed) {
		return managed.ExternalUpdate{}, err
	}
	members, err := e.members(ctx, observed)
	if err != nil {
		return managed.ExternalUpdate{}, err
	}
	var added []v1alpha1.HAChassis
	for _, c := range p.Chassis {
		if _, ok := members[c.Name]; !ok {
			added = append(added, c)
		}
	}
	if err := e.registered(ctx, added); err != nil {
		return managed.ExternalUpdate{}, err
	}
	var ops []ovsdb.Operation
	set := make([]string, 0, len(p.Chassis))
	for i, c := range p.Chassis {
		m, ok := members[c.Name]
		if !ok {
			hc := &nbdb.HAChassis{UUID: fmt.Sprintf("hc%d", i), ChassisName: c.Name, Priority: int(c.Priority)}
			op, err := e.conn.NB.Insert(hc)
			if err != nil {
				return managed.ExternalUpdate{}, terminal.Wrap(err)
			}
			ops = append(ops, op...)
			set = append(set, hc.UUID)
			continue
		}
		set = append(set, m.UUID)
		if m.Priority != int(c.Priority) {
			m.Priority = int(c.Priority)
			op, err := e.conn.NB.Update(m, &m.Priority)
			if err != nil {
				return managed.ExternalUpdate{}, terminal.Wrap(err)
			}
			ops = append(ops, op...)
		}
	}
	g := *observed
	g.HaChassis = set
	g.ExternalIDs = ovn.RowExternalIDs(observed.ExternalIDs, p.ExternalIDs, mg.GetName())
	op, err := e.conn.NB.Update(&g, &g.HaChassis, &g.ExternalIDs)
	if err != nil {
		return managed.ExternalUpdate{}, terminal.Wrap(err)
	}
	if _, err := ovn.Transact(ctx, e.conn.NB, append(ops, op...)...); err != nil {
		return managed.ExternalUpdate{}, fmt.Errorf("cannot update OVN HA chassis group %q: %w", p.Name, err)
	}
	return managed.ExternalUpdate{}, nil
}

// Delete removes the group; OVSDB refuses while a logical router port
// still uses it, and that refusal is the message.
func (e *external) Delete(ctx context.Context, mg *v1alpha1.HAChassisGroup) (managed.ExternalDelete, error) {
	mg.SetConditions(xpv2.Deleting())
	return managed.ExternalDelete{}, row.DeleteUnlessInUse(ctx, kind, e.conn.NB, mg, mg.Spec.ForProvider.Name, nil)
}

func (e *external) Disconnect(context.Context) error { return nil }

// registered refuses chassis the Southbound database does not know, naming
// each by its place in the spec; without a Southbound database it cannot
// tell and lets them through (ovn-northd ignores unknown chassis).
func (e *external) registered(ctx context.Context, chassis []v1alpha1.HAChassis) error {
	if e.conn.SB == nil || len(chassis) == 0 {
		return nil
	}
	var known []sbdb.Chassis
	if err := e.conn.SB.Select(ctx, &known); err != nil {
		return err
	}
	names := make([]string, 0, len(known))
	for _, c := range known {
		names = append(names, c.Name)
	}
	sort.Strings(names)
	var missing []string
	for i, c := range chassis {
		if !slices.Contains(names, c.Name) {
			missing = append(missing, fmt.Sprintf("spec.forProvider.chassis[%d].name: chassis %q is not registered in the OVN Southbound database", i, c.Name))
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if len(names) > 10 {
		names = append(names[:10], fmt.Sprintf("and %d more", len(names)-10))
	}
	return terminal.Wrap(fmt.Errorf("%s (registered: %s); nothing was written", strings.Join(missing, "; "), strings.Join(names, ", ")))
}

// byPriority lists member names, highest priority first.
func byPriority(members map[string]*nbdb.HAChassis) []string {
	names := slices.Collect(maps.Keys(members))
	sort.Slice(names, func(i, j int) bool {
		a, b := members[names[i]], members[names[j]]
		if a.Priority != b.Priority {
			return a.Priority > b.Priority
		}
		return a.ChassisName < b.ChassisName
	})
	return names
}
