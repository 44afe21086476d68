package integration

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/consumer-plane/apis/ovn/v1alpha1"
	"github.com/c5c3/consumer-plane/test/ovntest"
)

// withOVN starts OVN (one Northbound server, or a 3-member Raft cluster)
// with two registered chassis in zone az-a and one in az-b, and a
// ProviderConfig for it.
func withOVN(t *testing.T, raft bool) (*harness, *ovntest.OVN, string) {
	t.Helper()
	h := start(t)
	o := ovntest.Start(t, raft)
	for i, c := range []struct{ name, zone string }{{"hv-1", "az-a"}, {"hv-2", "az-a"}, {"hv-3", "az-b"}} {
		registerChassis(t, o, c.name, c.zone, i)
	}
	// Each test has its own OVN, so its own ProviderConfig.
	pc := h.name("ovn-" + strings.ToLower(strings.TrimPrefix(t.Name(), "TestIntegrationOVN")))
	h.create(t, &v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: pc}, Spec: v1alpha1.ProviderConfigSpec{
		Northbound: v1alpha1.Database{Endpoints: o.NB}, Southbound: &v1alpha1.Database{Endpoints: []string{o.SB}}}})
	return h, o, pc
}

// registerChassis does what an ovn-controller does when it starts: a
// Southbound Chassis with a geneve encap, announcing its zone the way the
// OVS agent configures it.
func registerChassis(t testing.TB, o *ovntest.OVN, name, zone string, i int) {
	t.Helper()
	o.SBCtl(t, "chassis-add", name, "geneve", fmt.Sprintf("127.0.1.%d", i+1))
	o.SBCtl(t, "set", "Chassis", name, "hostname="+name+".local",
		`other_config:ovn-cms-options="enable-chassis-as-gw,availability-zones=`+zone+`"`)
}

// rows lists a column of the Northbound rows of table matching conditions.
func rows(t testing.TB, o *ovntest.OVN, table, column string, where ...string) []string {
	t.Helper()
	out := o.NBCtl(t, append([]string{"--bare", "--columns=" + column, "find", table}, where...)...)
	var vals []string
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			vals = append(vals, l)
		}
	}
	return vals
}

func TestIntegrationOVNSingleServer(t *testing.T) { testOVNLifecycle(t, false) }

func TestIntegrationOVNRaftCluster(t *testing.T) { testOVNLifecycle(t, true) }

// testOVNLifecycle takes every OVN kind through create, change, drift and
// delete, and checks ovn-northd's Southbound result.
func testOVNLifecycle(t *testing.T, raft bool) {
	h, o, pc := withOVN(t, raft)
	ctx := context.Background()

	// A switch, with northd's datapath for it.
	ls := &v1alpha1.LogicalSwitch{ObjectMeta: metav1.ObjectMeta{Name: h.name("ls-infra")}, Spec: v1alpha1.LogicalSwitchSpec{
		ClusterManagedResourceSpec: managedBy(pc),
		ForProvider: v1alpha1.LogicalSwitchParameters{Name: "infra-mgmt", OtherConfig: map[string]string{"subnet": "10.10.0.0/24", "mcast_snoop": "true"},
			ExternalIDs: map[string]string{"purpose": "infrastructure"}}}}
	h.create(t, ls)
	h.waitReady(t, ls)
	if got := rows(t, o, "Logical_Switch", "_uuid", "name=infra-mgmt"); len(got) != 1 || got[0] != ls.Status.AtProvider.UUID {
		t.Fatalf("Logical_Switch rows %v, want exactly the resource's %s", got, ls.Status.AtProvider.UUID)
	}
	eventually(t, "northd's Datapath_Binding", func() (bool, string) {
		dp := o.SBCtl(t, "--bare", "--columns=tunnel_key", "find", "Datapath_Binding", "external_ids:name=infra-mgmt")
		if err := h.kube.Get(ctx, client.ObjectKeyFromObject(ls), ls); err != nil {
			return false, err.Error()
		}
		k := ls.Status.AtProvider.TunnelKey
		return dp != "" && k != nil && fmt.Sprint(*k) == dp, fmt.Sprintf("SB tunnel_key %q, status %v", dp, k)
	})

	// A key set by someone else stays; a key dropped from the spec goes;
	// drift of a managed key is put back.
	o.NBCtl(t, "set", "Logical_Switch", "infra-mgmt", "other_config:foreign=kept")
	h.update(t, ls, func() { ls.Spec.ForProvider.OtherConfig = map[string]string{"subnet": "10.20.0.0/24"} })
	eventually(t, "other_config follows the spec", func() (bool, string) {
		oc := o.NBCtl(t, "get", "Logical_Switch", "infra-mgmt", "other_config")
		return strings.Contains(oc, `subnet="10.20.0.0/24"`) && strings.Contains(oc, "foreign=kept") && !strings.Contains(oc, "mcast_snoop"), oc
	})
	o.NBCtl(t, "set", "Logical_Switch", "infra-mgmt", `other_config:subnet="192.168.0.0/16"`)
	eventually(t, "drift repaired", func() (bool, string) {
		oc := o.NBCtl(t, "get", "Logical_Switch", "infra-mgmt", "other_config")
		return strings.Contains(oc, `subnet="10.20.0.0/24"`), oc
	})

	// A router, disabled and enabled again.
	lr := &v1alpha1.LogicalRouter{ObjectMeta: metav1.ObjectMeta{Name: h.name("lr-infra")}, Spec: v1alpha1.LogicalRouterSpec{
		ClusterManagedResourceSpec: managedBy(pc),
		ForProvider:                v1alpha1.LogicalRouterParameters{Name: "infra-router", Enabled: boolPtr(false), Options: map[string]string{"always_learn_from_arp_request": "false"}}}}
	h.create(t, lr)
	h.waitReady(t, lr)
	if got := o.NBCtl(t, "get", "Logical_Router", "infra-router", "enabled"); got != "false" {
		t.Fatalf("router enabled=%s, want false", got)
	}
	h.update(t, lr, func() { lr.Spec.ForProvider.Enabled = boolPtr(true) })
	eventually(t, "router enabled", func() (bool, string) {
		got := o.NBCtl(t, "get", "Logical_Router", "infra-router", "enabled")
		return got == "true", got
	})
	eventually(t, "northd's router datapath", func() (bool, string) {
		dp := o.SBCtl(t, "--bare", "--columns=tunnel_key", "find", "Datapath_Binding", "external_ids:name=infra-router")
		return dp != "", "no Datapath_Binding yet"
	})

	// An HA chassis group for zone az-a's gateways, then re-prioritised
	// with a third member.
	g := &v1alpha1.HAChassisGroup{ObjectMeta: metav1.ObjectMeta{Name: h.name("gw-az-a")}, Spec: v1alpha1.HAChassisGroupSpec{
		ClusterManagedResourceSpec: managedBy(pc),
		ForProvider: v1alpha1.HAChassisGroupParameters{Name: "gw-az-a",
			Chassis: []v1alpha1.HAChassis{{Name: "hv-1", Priority: 20}, {Name: "hv-2", Priority: 10}}}}}
	h.create(t, g)
	h.waitReady(t, g)
	if m := g.Status.AtProvider.Members; !slices.Equal(m, []string{"hv-1", "hv-2"}) {
		t.Fatalf("members %v, want [hv-1 hv-2]", m)
	}
	h.update(t, g, func() {
		g.Spec.ForProvider.Chassis = []v1alpha1.HAChassis{{Name: "hv-1", Priority: 5}, {Name: "hv-2", Priority: 30}, {Name: "hv-3", Priority: 15}}
	})
	eventually(t, "group re-prioritised", func() (bool, string) {
		out := o.NBCtl(t, "ha-chassis-group-list")
		_ = h.kube.Get(ctx, client.ObjectKeyFromObject(g), g)
		m := g.Status.AtProvider.Members
		return slices.Equal(m, []string{"hv-2", "hv-3", "hv-1"}) && len(rows(t, o, "HA_Chassis", "chassis_name")) == 3, fmt.Sprintf("members %v; %s", m, out)
	})

	// NB_Global options: only the resource's keys, removed on delete.
	o.NBCtl(t, "set", "NB_Global", ".", "options:foreign=kept")
	nbg := &v1alpha1.NBGlobal{ObjectMeta: metav1.ObjectMeta{Name: h.name("nb-global")}, Spec: v1alpha1.NBGlobalSpec{
		ClusterManagedResourceSpec: managedBy(pc), ForProvider: v1alpha1.NBGlobalParameters{Options: map[string]string{"northd_probe_interval": "7000"}}}}
	h.create(t, nbg)
	h.waitReady(t, nbg)
	if opts := o.NBCtl(t, "get", "NB_Global", ".", "options"); !strings.Contains(opts, `northd_probe_interval="7000"`) {
		t.Fatalf("NB_Global options %s", opts)
	}

	// The chassis of zone az-a, and a hypervisor joining it.
	cs := &v1alpha1.ChassisSet{ObjectMeta: metav1.ObjectMeta{Name: h.name("az-a")}, Spec: v1alpha1.ChassisSetSpec{
		ClusterManagedResourceSpec: managedBy(pc), ForProvider: v1alpha1.ChassisSetParameters{AvailabilityZones: []string{"az-a"}, MinChassis: 3}}}
	h.create(t, cs)
	eventually(t, "two chassis in az-a, not ready below minChassis", func() (bool, string) {
		_ = h.kube.Get(ctx, client.ObjectKeyFromObject(cs), cs)
		r := cs.GetCondition(xpv2.TypeReady)
		return cs.Status.AtProvider.Count == 2 && r.Status == corev1.ConditionFalse && strings.Contains(r.Message, "minChassis is 3"),
			fmt.Sprintf("count %d Ready=%s %s", cs.Status.AtProvider.Count, r.Status, r.Message)
	})
	registerChassis(t, o, "hv-4", "az-a", 4)
	h.waitReady(t, cs)
	if c := cs.Status.AtProvider.Chassis; len(c) != 3 || c[2].Name != "hv-4" || c[2].EncapIPs[0] != "127.0.1.5" || !c[2].Gateway {
		t.Fatalf("chassis %+v", c)
	}

	// Delete everything; only the provider's rows and keys go.
	for _, obj := range []resource.Managed{ls, lr, g, nbg, cs} {
		h.delete(t, obj)
	}
	for _, obj := range []resource.Managed{ls, lr, g, nbg, cs} {
		h.waitGone(t, obj)
	}
	if n := len(rows(t, o, "Logical_Switch", "name")) + len(rows(t, o, "Logical_Router", "name")) + len(rows(t, o, "HA_Chassis_Group", "name")); n != 0 {
		t.Fatalf("%d rows left after delete", n)
	}
	opts := o.NBCtl(t, "get", "NB_Global", ".", "options")
	if strings.Contains(opts, "northd_probe_interval") || !strings.Contains(opts, "foreign=kept") {
		t.Fatalf("NB_Global options after delete: %s", opts)
	}
}

// TestIntegrationOVNRaftLeaderKilled kills the Northbound leader while 30
// switches are being created and again while they are deleted: every
// resource converges, and no switch exists twice (a create whose reply
// was lost is not repeated, thanks to the name guard in its transaction).
func TestIntegrationOVNRaftLeaderKilled(t *testing.T) {
	h, o, pc := withOVN(t, true)
	const n = 30
	var switches []*v1alpha1.LogicalSwitch
	for i := range n {
		ls := &v1alpha1.LogicalSwitch{ObjectMeta: metav1.ObjectMeta{Name: h.name(fmt.Sprintf("raft-ls-%02d", i))}, Spec: v1alpha1.LogicalSwitchSpec{
			ClusterManagedResourceSpec: managedBy(pc),
			ForProvider:                v1alpha1.LogicalSwitchParameters{Name: fmt.Sprintf("raft-%02d", i), OtherConfig: map[string]string{"subnet": fmt.Sprintf("10.30.%d.0/24", i)}}}}
		h.create(t, ls)
		switches = append(switches, ls)
	}
	eventually(t, "some switches written", func() (bool, string) {
		got := len(rows(t, o, "Logical_Switch", "name"))
		return got >= 5, fmt.Sprintf("%d rows", got)
	})
	killed := o.KillLeader(t)
	t.Logf("killed Raft member %d mid-create; new leader %d", killed, o.Leader())
	for _, ls := range switches {
		h.waitReady(t, ls)
	}
	names := rows(t, o, "Logical_Switch", "name")
	slices.Sort(names)
	if len(names) != n || len(slices.Compact(slices.Clone(names))) != n {
		t.Fatalf("%d Logical_Switch rows for %d resources: %v", len(names), n, names)
	}
	o.Restart(t, killed)

	for _, ls := range switches {
		h.delete(t, ls)
	}
	eventually(t, "some switches deleted", func() (bool, string) {
		got := len(rows(t, o, "Logical_Switch", "name"))
		return got <= n-5, fmt.Sprintf("%d rows", got)
	})
	killed = o.KillLeader(t)
	t.Logf("killed Raft member %d mid-delete", killed)
	for _, ls := range switches {
		h.waitGone(t, ls)
	}
	if left := rows(t, o, "Logical_Switch", "name"); len(left) != 0 {
		t.Fatalf("rows left: %v", left)
	}
}

// TestIntegrationOVNRefusals: a switch Neutron owns, a switch someone else
// made and a group naming an unregistered chassis are each refused with a
// message, and nothing in the database changes.
func TestIntegrationOVNRefusals(t *testing.T) {
	h, o, pc := withOVN(t, false)
	o.NBCtl(t, "ls-add", "neutron-net")
	o.NBCtl(t, "set", "Logical_Switch", "neutron-net", `external_ids:"neutron:network_name"=tenant-net`, "other_config:subnet=172.16.0.0/24")
	o.NBCtl(t, "ls-add", "handmade")
	before := o.NBCtl(t, "list", "Logical_Switch")

	neutron := &v1alpha1.LogicalSwitch{ObjectMeta: metav1.ObjectMeta{Name: h.name("takes-neutron")}, Spec: v1alpha1.LogicalSwitchSpec{
		ClusterManagedResourceSpec: managedBy(pc),
		ForProvider:                v1alpha1.LogicalSwitchParameters{Name: "neutron-net", OtherConfig: map[string]string{"subnet": "10.0.0.0/8"}}}}
	foreign := &v1alpha1.LogicalSwitch{ObjectMeta: metav1.ObjectMeta{Name: h.name("takes-handmade")}, Spec: v1alpha1.LogicalSwitchSpec{
		ClusterManagedResourceSpec: managedBy(pc), ForProvider: v1alpha1.LogicalSwitchParameters{Name: "handmade"}}}
	// Even pointed at the row by UUID, a Neutron row is not written.
	byUUID := &v1alpha1.LogicalSwitch{ObjectMeta: metav1.ObjectMeta{Name: h.name("neutron-by-uuid"),
		Annotations: map[string]string{"crossplane.io/external-name": rows(t, o, "Logical_Switch", "_uuid", "name=neutron-net")[0]}},
		Spec: v1alpha1.LogicalSwitchSpec{ClusterManagedResourceSpec: managedBy(pc), ForProvider: v1alpha1.LogicalSwitchParameters{Name: "neutron-net"}}}
	missing := &v1alpha1.HAChassisGroup{ObjectMeta: metav1.ObjectMeta{Name: h.name("gw-missing")}, Spec: v1alpha1.HAChassisGroupSpec{
		ClusterManagedResourceSpec: managedBy(pc),
		ForProvider: v1alpha1.HAChassisGroupParameters{Name: "gw-missing",
			Chassis: []v1alpha1.HAChassis{{Name: "hv-1", Priority: 10}, {Name: "hv-9", Priority: 5}}}}}
	for _, mg := range []resource.Managed{neutron, foreign, byUUID, missing} {
		h.create(t, mg)
	}
	h.waitSyncError(t, neutron, "terminal:", `OVN logical switch "neutron-net" is owned by Neutron`)
	h.waitSyncError(t, byUUID, "terminal:", "is owned by Neutron")
	h.waitSyncError(t, foreign, "terminal:", `OVN logical switch "handmade" already exists and was not created by this resource`, "crossplane.io/external-name")
	h.waitSyncError(t, missing, "terminal:", `spec.forProvider.chassis[1].name: chassis "hv-9" is not registered in the OVN Southbound database`, "registered: hv-1, hv-2, hv-3", "nothing was written")

	if after := o.NBCtl(t, "list", "Logical_Switch"); after != before {
		t.Fatalf("Logical_Switch rows changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if g := rows(t, o, "HA_Chassis_Group", "name"); len(g) != 0 {
		t.Fatalf("HA_Chassis_Group rows %v, want none", g)
	}
	// Registering the chassis lets the group through.
	registerChassis(t, o, "hv-9", "az-b", 9)
	h.waitReady(t, missing)

	// Deleting the refused resources leaves the rows they were refused.
	for _, mg := range []resource.Managed{neutron, foreign, byUUID, missing} {
		h.delete(t, mg)
	}
	for _, mg := range []resource.Managed{neutron, foreign, byUUID, missing} {
		h.waitGone(t, mg)
	}
	if got := rows(t, o, "Logical_Switch", "name"); len(got) != 2 {
		t.Fatalf("Logical_Switch rows after deleting the refused resources: %v", got)
	}
}

// TestIntegrationOVNTLS reaches the Northbound over ssl: with a client
// certificate from the ProviderConfig's Secret; a CA that did not sign the
// server's certificate is refused with a message.
func TestIntegrationOVNTLS(t *testing.T) {
	h := start(t)
	ctx := context.Background()
	o, sslNB, cert := ovntest.StartTLS(t)
	secrets := map[string]*corev1.Secret{}
	for name, ca := range map[string][]byte{"good": cert.CA, "wrong-ca": ovntest.NewCA(t)} {
		sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: h.name("ovn-tls-" + name), Namespace: "crossplane-system"},
			Data: map[string][]byte{v1alpha1.TLSSecretKeyCA: ca, v1alpha1.TLSSecretKeyCert: cert.Cert, v1alpha1.TLSSecretKeyKey: cert.Key}}
		h.create(t, sec)
		secrets[name] = sec
		h.create(t, &v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: h.name("ovn-tls-" + name)}, Spec: v1alpha1.ProviderConfigSpec{
			Northbound:   v1alpha1.Database{Endpoints: []string{sslNB}},
			TLSSecretRef: &xpv2.SecretReference{Namespace: sec.Namespace, Name: sec.Name}}})
	}
	good := &v1alpha1.LogicalSwitch{ObjectMeta: metav1.ObjectMeta{Name: h.name("tls-switch")}, Spec: v1alpha1.LogicalSwitchSpec{
		ClusterManagedResourceSpec: managedBy(h.name("ovn-tls-good")), ForProvider: v1alpha1.LogicalSwitchParameters{Name: "over-tls"}}}
	bad := &v1alpha1.LogicalSwitch{ObjectMeta: metav1.ObjectMeta{Name: h.name("tls-wrong-ca")}, Spec: v1alpha1.LogicalSwitchSpec{
		ClusterManagedResourceSpec: managedBy(h.name("ovn-tls-wrong-ca")), ForProvider: v1alpha1.LogicalSwitchParameters{Name: "never"}}}
	h.create(t, good)
	h.create(t, bad)
	h.waitReady(t, good)
	if got := rows(t, o, "Logical_Switch", "name"); !slices.Equal(got, []string{"over-tls"}) {
		t.Fatalf("Logical_Switch rows %v", got)
	}
	h.waitSyncError(t, bad, "cannot connect to the OVN Northbound database at "+sslNB, "certificate")

	// The TLS Secret is guarded while its ProviderConfig has users, as
	// OpenStack credentials are: deleted first — as when a cloud goes,
	// whose Secret is an Object's connection secret — it stays readable
	// until the switch has left OVN, then goes.
	sec := secrets["good"]
	eventually(t, "the TLS Secret is guarded", func() (bool, string) {
		got := &corev1.Secret{}
		if err := h.kube.Get(ctx, client.ObjectKeyFromObject(sec), got); err != nil {
			return false, err.Error()
		}
		return len(got.Finalizers) == 1, "finalizers: " + strings.Join(got.Finalizers, ",")
	})
	h.delete(t, sec)
	h.delete(t, good)
	h.waitGone(t, good)
	if got := rows(t, o, "Logical_Switch", "name"); len(got) != 0 {
		t.Fatalf("Logical_Switch rows after the switch was deleted with its TLS Secret: %v", got)
	}
	// Usages go by garbage collection, which this API server does not run.
	if err := h.kube.DeleteAllOf(ctx, &v1alpha1.ProviderConfigUsage{}, client.MatchingLabels{xpv2.LabelKeyProviderName: good.Spec.ProviderConfigReference.Name}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the TLS Secret goes once its ProviderConfig has no users", func() (bool, string) {
		err := h.kube.Get(ctx, client.ObjectKeyFromObject(sec), &corev1.Secret{})
		return kerrors.IsNotFound(err), errString(err)
	})
	// A resource whose ProviderConfig cannot connect is let go with Orphan.
	h.update(t, bad, func() { bad.Spec.DeletionPolicy = xpv2.DeletionOrphan })
	h.delete(t, bad)
	h.waitGone(t, bad)
}
