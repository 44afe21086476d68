// Package ovs is the OVS node agent: it reads the node's Open_vSwitch
// database (libovsdb, models from modelgen in vswitchd/) — bridges, ports,
// bonds and ovn-controller's settings — publishes them as the node's OVSNode,
// and writes the node's availability zones into ovn-cms-options from its
// zone labels, so Neutron schedules gateways into the zones Nova uses.
package ovs

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/go-logr/logr"
	"github.com/ovn-org/libovsdb/cache"
	"github.com/ovn-org/libovsdb/client"
	"github.com/ovn-org/libovsdb/model"
	"github.com/ovn-org/libovsdb/ovsdb"
	"k8s.io/utils/ptr"

	ovsv1alpha1 "github.com/c5c3/consumer-plane/agents/apis/ovs/v1alpha1"
	"github.com/c5c3/consumer-plane/agents/internal/ovs/vswitchd"
)

// DB is a connection to the local Open_vSwitch database with a monitor of
// the tables the agent reads, kept current and reconnected by libovsdb.
type DB struct {
	c client.Client
}

// Dial connects to endpoint (unix:/var/run/openvswitch/db.sock on a node).
func Dial(ctx context.Context, endpoint string, log logr.Logger) (*DB, error) {
	dbm, err := vswitchd.FullDatabaseModel()
	if err != nil {
		return nil, err
	}
	bo := backoff.NewExponentialBackOff()
	bo.InitialInterval, bo.MaxInterval, bo.MaxElapsedTime = 100*time.Millisecond, 5*time.Second, 0
	c, err := client.NewOVSDBClient(dbm, client.WithEndpoint(endpoint), client.WithLogger(&log),
		client.WithReconnect(10*time.Second, bo), client.WithInactivityCheck(30*time.Second, 10*time.Second, bo))
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := c.Connect(cctx); err != nil {
		return nil, fmt.Errorf("cannot connect to the Open_vSwitch database at %s: %w", endpoint, err)
	}
	if _, err := c.Monitor(cctx, c.NewMonitor(
		client.WithTable(&vswitchd.OpenvSwitch{}),
		client.WithTable(&vswitchd.Bridge{}),
		client.WithTable(&vswitchd.Port{}),
		client.WithTable(&vswitchd.Interface{}),
	)); err != nil {
		c.Close()
		return nil, fmt.Errorf("cannot monitor the Open_vSwitch database at %s: %w", endpoint, err)
	}
	return &DB{c: c}, nil
}

// Close disconnects.
func (d *DB) Close() { d.c.Close() }

// Connected reports whether the connection is up now.
func (d *DB) Connected() bool { return d.c.Connected() }

// OnChange calls fn after any change of a monitored row. fn must not block.
func (d *DB) OnChange(fn func()) {
	d.c.Cache().AddEventHandler(&cache.EventHandlerFuncs{
		AddFunc:    func(string, model.Model) { fn() },
		UpdateFunc: func(string, model.Model, model.Model) { fn() },
		DeleteFunc: func(string, model.Model) { fn() },
	})
}

// root is the Open_vSwitch table's single row.
func (d *DB) root(ctx context.Context) (*vswitchd.OpenvSwitch, error) {
	var rows []vswitchd.OpenvSwitch
	if err := d.c.List(ctx, &rows); err != nil {
		return nil, err
	}
	if len(rows) != 1 {
		return nil, fmt.Errorf("the Open_vSwitch table has %d rows, want 1 (is the database initialised, ovs-vsctl init?)", len(rows))
	}
	return &rows[0], nil
}

// Read builds the OVSNode status (without conditions) from the cache.
func (d *DB) Read(ctx context.Context) (ovsv1alpha1.OVSNodeStatus, error) {
	var st ovsv1alpha1.OVSNodeStatus
	root, err := d.root(ctx)
	if err != nil {
		return st, err
	}
	st.OVSVersion, st.DBVersion = ptr.Deref(root.OVSVersion, ""), ptr.Deref(root.DbVersion, "")
	ids := root.ExternalIDs
	st.OVN = ovsv1alpha1.OVNSettings{
		SystemID: ids["system-id"], Remote: ids["ovn-remote"], EncapType: ids["ovn-encap-type"], EncapIP: ids["ovn-encap-ip"],
		BridgeMappings: ids["ovn-bridge-mappings"], CMSOptions: ids[cmsOptions], AvailabilityZones: zonesIn(ids[cmsOptions]),
	}

	var bridges []vswitchd.Bridge
	var ports []vswitchd.Port
	var ifaces []vswitchd.Interface
	for _, l := range []any{&bridges, &ports, &ifaces} {
		if err := d.c.List(ctx, l); err != nil {
			return st, err
		}
	}
	portBy := map[string]*vswitchd.Port{}
	for i := range ports {
		portBy[ports[i].UUID] = &ports[i]
	}
	ifaceBy := map[string]*vswitchd.Interface{}
	for i := range ifaces {
		ifaceBy[ifaces[i].UUID] = &ifaces[i]
	}
	for _, b := range bridges {
		if !slices.Contains(root.Bridges, b.UUID) {
			continue // not (or no longer) attached to the switch
		}
		out := ovsv1alpha1.Bridge{Name: b.Name, DatapathType: b.DatapathType}
		if b.FailMode != nil {
			out.FailMode = string(*b.FailMode)
		}
		for _, pu := range b.Ports {
			p, ok := portBy[pu]
			if !ok {
				continue
			}
			port := ovsv1alpha1.Port{Name: p.Name}
			for _, iu := range p.Interfaces {
				if i, ok := ifaceBy[iu]; ok {
					port.Interfaces = append(port.Interfaces, interfaceOf(i))
				}
			}
			sort.Slice(port.Interfaces, func(a, b int) bool { return port.Interfaces[a].Name < port.Interfaces[b].Name })
			if len(p.Interfaces) > 1 {
				port.Bond = &ovsv1alpha1.Bond{}
				if p.BondMode != nil {
					port.Bond.Mode = string(*p.BondMode)
				}
				if p.LACP != nil {
					port.Bond.LACP = string(*p.LACP)
				}
			}
			out.Ports = append(out.Ports, port)
		}
		sort.Slice(out.Ports, func(a, b int) bool { return out.Ports[a].Name < out.Ports[b].Name })
		st.Bridges = append(st.Bridges, out)
	}
	sort.Slice(st.Bridges, func(a, b int) bool { return st.Bridges[a].Name < st.Bridges[b].Name })
	st.BridgeCount = len(st.Bridges)
	return st, nil
}

func interfaceOf(i *vswitchd.Interface) ovsv1alpha1.Interface {
	out := ovsv1alpha1.Interface{Name: i.Name, Type: i.Type, MAC: ptr.Deref(i.MACInUse, ""), Error: ptr.Deref(i.Error, "")}
	if i.Ofport != nil {
		v := int64(*i.Ofport)
		out.OFPort = &v
	}
	if i.LinkState != nil {
		out.LinkState = string(*i.LinkState)
	}
	return out
}

// SetZones makes ovn-cms-options carry exactly zones as its
// availability-zones option, keeping every other option. It reports whether
// it wrote. The write deletes the old value and inserts the new one in one
// transaction, so a concurrent change of ovn-cms-options by someone else is
// never overwritten: the delete then matches nothing, the insert finds the
// key taken, and the next sync looks again.
func (d *DB) SetZones(ctx context.Context, zones []string) (bool, error) {
	root, err := d.root(ctx)
	if err != nil {
		return false, err
	}
	old, had := root.ExternalIDs[cmsOptions]
	want := withZones(old, zones)
	if had && want == old {
		return false, nil
	}
	row := &vswitchd.OpenvSwitch{UUID: root.UUID}
	var muts []model.Mutation
	if had {
		muts = append(muts, model.Mutation{Field: &row.ExternalIDs, Mutator: ovsdb.MutateOperationDelete, Value: map[string]string{cmsOptions: old}})
	}
	muts = append(muts, model.Mutation{Field: &row.ExternalIDs, Mutator: ovsdb.MutateOperationInsert, Value: map[string]string{cmsOptions: want}})
	ops, err := d.c.Where(row).Mutate(row, muts...)
	if err != nil {
		return false, err
	}
	res, err := d.c.Transact(ctx, ops...)
	if err != nil {
		return false, fmt.Errorf("cannot set ovn-cms-options: %w", err)
	}
	if _, err := ovsdb.CheckOperationResults(res, ops); err != nil {
		return false, fmt.Errorf("cannot set ovn-cms-options: %w", err)
	}
	return true, nil
}

const (
	cmsOptions = "ovn-cms-options"
	azOption   = "availability-zones"
)

// withZones returns ovn-cms-options (comma-separated; the zones
// colon-separated, as Neutron's OVN driver reads them) with its
// availability-zones option set to zones.
func withZones(opts string, zones []string) string {
	var out []string
	for _, o := range strings.Split(opts, ",") {
		if o = strings.TrimSpace(o); o != "" && !strings.HasPrefix(o, azOption+"=") {
			out = append(out, o)
		}
	}
	if len(zones) > 0 {
		out = append(out, azOption+"="+strings.Join(zones, ":"))
	}
	return strings.Join(out, ",")
}

// zonesIn reads the availability-zones option of ovn-cms-options.
func zonesIn(opts string) []string {
	for _, o := range strings.Split(opts, ",") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(o), azOption+"="); ok && v != "" {
			return strings.Split(v, ":")
		}
	}
	return nil
}
