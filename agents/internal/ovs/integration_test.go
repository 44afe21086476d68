package ovs_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ovsv1alpha1 "github.com/c5c3/consumer-plane/agents/apis/ovs/v1alpha1"
	"github.com/c5c3/consumer-plane/agents/internal/agent"
	"github.com/c5c3/consumer-plane/agents/internal/ovs"
	"github.com/c5c3/consumer-plane/agents/internal/ovstest"
	"github.com/c5c3/consumer-plane/internal/securemetrics"
	"github.com/c5c3/consumer-plane/test/kubetest"
)

func TestMain(m *testing.M) {
	if err := ovsv1alpha1.AddToScheme(clientgoscheme.Scheme); err != nil {
		panic(err)
	}
	os.Exit(kubetest.Main(m, "../../../cluster/crds/agents"))
}

// TestIntegrationOVSAgent runs the agent against a real ovsdb-server with the
// Open_vSwitch schema and a real kube-apiserver: it publishes bridges, ports
// and bonds, writes the node's zone into ovn-cms-options (keeping the other
// options), and follows changes of the database and of the node's labels.
func TestIntegrationOVSAgent(t *testing.T) {
	kube := kubetest.Client(t)
	srv := ovstest.Start(t)
	srv.Vsctl(t, "set", "open_vswitch", ".", "external_ids:system-id=chassis-1", "external_ids:ovn-encap-type=geneve",
		"external_ids:ovn-encap-ip=192.0.2.11", "external_ids:ovn-remote=tcp:192.0.2.1:6642",
		"external_ids:ovn-bridge-mappings=physnet1:br-ex", `external_ids:ovn-cms-options=enable-chassis-as-gw`)
	srv.Vsctl(t, "add-br", "br-int", "--", "set", "bridge", "br-int", "fail_mode=secure")
	srv.Vsctl(t, "add-br", "br-ex")
	srv.Vsctl(t, "add-bond", "br-ex", "bond0", "eth0", "eth1", "bond_mode=active-backup", "lacp=active")
	srv.Vsctl(t, "add-port", "br-int", "tap-vm1", "--", "set", "interface", "tap-vm1", "type=internal")

	const name = "ovs-node-1"
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"c5c3.io/pool": "hv-pool-a"}}}
	if err := kube.Create(context.Background(), node); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kube.Delete(context.Background(), node) })

	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = ovsv1alpha1.AddToScheme(scheme)
	mgr, err := agent.NewManagerFor(kubetest.Config(t), agent.Options{Node: name, Metrics: securemetrics.Flags{Address: "0"}, ProbeAddr: "0"}, scheme,
		&corev1.Node{}, &ovsv1alpha1.OVSNode{})
	if err != nil {
		t.Fatal(err)
	}
	db, err := ovs.Dial(ctx, srv.Endpoint(), testr.New(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	r := &ovs.Reconciler{Client: mgr.GetClient(), Node: name, DB: db, ZoneLabels: []string{"c5c3.io/pool"}}
	if err := r.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	go func() { _ = mgr.Start(ctx) }()

	until(t, kube, name, "bridges, bond and OVN settings", func(st ovsv1alpha1.OVSNodeStatus) error {
		if c := meta.FindStatusCondition(st.Conditions, ovs.ConditionReady); c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("not Ready: %+v", c)
		}
		if got := bridgeNames(st); !slices.Equal(got, []string{"br-ex", "br-int"}) {
			return fmt.Errorf("bridges %v", got)
		}
		bond := port(st, "br-ex", "bond0")
		if bond == nil || bond.Bond == nil || bond.Bond.Mode != "active-backup" || bond.Bond.LACP != "active" || len(bond.Interfaces) != 2 {
			return fmt.Errorf("bond0: %+v", bond)
		}
		if tap := port(st, "br-int", "tap-vm1"); tap == nil || tap.Interfaces[0].Type != "internal" || tap.Bond != nil {
			return fmt.Errorf("tap-vm1: %+v", tap)
		}
		if st.OVN.SystemID != "chassis-1" || st.OVN.EncapIP != "192.0.2.11" || st.OVN.EncapType != "geneve" || st.OVN.BridgeMappings != "physnet1:br-ex" {
			return fmt.Errorf("ovn settings %+v", st.OVN)
		}
		return zonesAre(st, "hv-pool-a")
	})
	// Written to the database itself, the other option kept.
	if got := srv.Vsctl(t, "get", "open_vswitch", ".", "external_ids:ovn-cms-options"); got != `"enable-chassis-as-gw,availability-zones=hv-pool-a"` {
		t.Fatalf("ovn-cms-options in the database = %s", got)
	}

	// A change in the database shows up.
	srv.Vsctl(t, "add-br", "br-tenant")
	srv.Vsctl(t, "del-port", "br-int", "tap-vm1")
	until(t, kube, name, "the new bridge and the removed port", func(st ovsv1alpha1.OVSNodeStatus) error {
		if got := bridgeNames(st); !slices.Equal(got, []string{"br-ex", "br-int", "br-tenant"}) {
			return fmt.Errorf("bridges %v", got)
		}
		if port(st, "br-int", "tap-vm1") != nil {
			return fmt.Errorf("tap-vm1 still published")
		}
		return nil
	})

	// Someone rewrites ovn-cms-options without the zone: the agent puts it back.
	srv.Vsctl(t, "set", "open_vswitch", ".", `external_ids:ovn-cms-options="enable-chassis-as-gw,foo=bar"`)
	untilDB(t, srv, `"enable-chassis-as-gw,foo=bar,availability-zones=hv-pool-a"`)

	// The node moves to another pool: the zone follows its label.
	patched := node.DeepCopy()
	patched.Labels["c5c3.io/pool"] = "hv-pool-b"
	if err := kube.Patch(context.Background(), patched, client.MergeFrom(node)); err != nil {
		t.Fatal(err)
	}
	untilDB(t, srv, `"enable-chassis-as-gw,foo=bar,availability-zones=hv-pool-b"`)
	until(t, kube, name, "the new zone", func(st ovsv1alpha1.OVSNodeStatus) error { return zonesAre(st, "hv-pool-b") })

	// The OVSNode is owned by the Node (garbage-collected with it).
	obj := &ovsv1alpha1.OVSNode{}
	if err := kube.Get(context.Background(), client.ObjectKey{Name: name}, obj); err != nil {
		t.Fatal(err)
	}
	if len(obj.OwnerReferences) != 1 || obj.OwnerReferences[0].Kind != "Node" || obj.OwnerReferences[0].Name != name {
		t.Fatalf("owner references %+v", obj.OwnerReferences)
	}
}

func bridgeNames(st ovsv1alpha1.OVSNodeStatus) []string {
	var out []string
	for _, b := range st.Bridges {
		out = append(out, b.Name)
	}
	return out
}

func port(st ovsv1alpha1.OVSNodeStatus, bridge, name string) *ovsv1alpha1.Port {
	for _, b := range st.Bridges {
		if b.Name != bridge {
			continue
		}
		for i := range b.Ports {
			if b.Ports[i].Name == name {
				return &b.Ports[i]
			}
		}
	}
	return nil
}

func zonesAre(st ovsv1alpha1.OVSNodeStatus, zones ...string) error {
	if !slices.Equal(st.OVN.AvailabilityZones, zones) {
		return fmt.Errorf("availability zones %v, want %v", st.OVN.AvailabilityZones, zones)
	}
	if c := meta.FindStatusCondition(st.Conditions, ovs.ConditionZonesApplied); c == nil || c.Status != metav1.ConditionTrue {
		return fmt.Errorf("zones not applied: %+v", c)
	}
	return nil
}

func until(t *testing.T, kube client.Client, name, what string, check func(ovsv1alpha1.OVSNodeStatus) error) {
	t.Helper()
	kubetest.Until(t, what+" published", 20*time.Second, func() error {
		obj := &ovsv1alpha1.OVSNode{}
		if err := kube.Get(context.Background(), client.ObjectKey{Name: name}, obj); err != nil {
			return err
		}
		return check(obj.Status)
	})
}

func untilDB(t *testing.T, srv *ovstest.Server, want string) {
	t.Helper()
	kubetest.Until(t, "ovn-cms-options "+strings.Trim(want, `"`), 20*time.Second, func() error {
		if got := srv.Vsctl(t, "get", "open_vswitch", ".", "external_ids:ovn-cms-options"); got != want {
			return fmt.Errorf("ovn-cms-options = %s", got)
		}
		return nil
	})
}
