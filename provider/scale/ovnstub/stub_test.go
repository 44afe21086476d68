package ovnstub

import (
	"context"
	"net"
	"testing"

	"github.com/go-logr/logr"

	"github.com/c5c3/consumer-plane/provider/internal/clients/ovn"
	"github.com/c5c3/consumer-plane/provider/internal/clients/ovn/nbdb"
	"github.com/c5c3/consumer-plane/provider/internal/clients/ovn/sbdb"
)

// The provider's own client (leader-only, as an OVN ProviderConfig
// defaults to) connects to a stub cloud's Northbound and Southbound,
// finds the pools' chassis, and its writes and the stub's drift are
// counted apart.
func TestCloudServesTheProvidersClient(t *testing.T) {
	ctx := context.Background()
	pools := []string{"hv-pool-a", "hv-pool-b"}
	l, err := New(2, pools, func(i int) net.IP { return net.IPv4(127, 2, 0, byte(1+i)) })
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if l.Clouds[0].Endpoint == l.Clouds[1].Endpoint {
		t.Fatalf("two clouds on one endpoint %s", l.Clouds[0].Endpoint)
	}
	c := l.Clouds[1]
	conn, err := ovn.Dial(ctx, ovn.Config{Northbound: []string{c.Endpoint}, Southbound: []string{c.Endpoint}, LeaderOnly: true}, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	var chassis []sbdb.Chassis
	if err := conn.SB.Select(ctx, &chassis); err != nil {
		t.Fatal(err)
	}
	if len(chassis) != len(pools)*ChassisPerPool {
		t.Fatalf("%d chassis registered, want %d", len(chassis), len(pools)*ChassisPerPool)
	}
	for _, ch := range chassis {
		if len(ch.Encaps) != 1 || ch.OtherConfig["ovn-cms-options"] == "" {
			t.Errorf("chassis %s: encaps %v, other_config %v", ch.Name, ch.Encaps, ch.OtherConfig)
		}
	}

	g := &nbdb.HAChassisGroup{UUID: "g", Name: "c00001-hv-pool-a", HaChassis: []string{"m"}}
	m := &nbdb.HAChassis{UUID: "m", ChassisName: Chassis("hv-pool-a", 0), Priority: 32767}
	ops, err := conn.NB.Insert(g, m)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ovn.Transact(ctx, conn.NB, ops...); err != nil {
		t.Fatal(err)
	}
	if got := c.Counts(); got.Writes != 1 || got.Connects != 2 || got.Open != 2 {
		t.Errorf("counts after one write of the provider's: %+v, want 1 write, 2 connections", got)
	}
	if got := l.Clouds[0].Counts(); got.Writes != 0 || got.Connects != 0 {
		t.Errorf("the other cloud counted %+v", got)
	}

	if err := c.DriftPriority(ctx, g.Name, m.ChassisName, 1); err != nil {
		t.Fatal(err)
	}
	if p, err := c.Priority(ctx, g.Name, m.ChassisName); err != nil || p != 1 {
		t.Fatalf("priority after the drift: %d, %v", p, err)
	}
	// The provider reads the drift, as it would another client's.
	var members []nbdb.HAChassis
	if err := conn.NB.Select(ctx, &members); err != nil {
		t.Fatal(err)
	}
	if len(members) != 1 || members[0].Priority != 1 {
		t.Fatalf("the provider reads %+v, not the drift", members)
	}
	if got := c.Counts(); got.Writes != 1 {
		t.Errorf("the stub's drift counted as the provider's write: %+v", got)
	}
}
