package gardenerstandin

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// TestIntegrationAShootClusterStartsAgainOnItsData starts a Shoot's cluster,
// stops it and starts it again under the same UID, as the stand-in does
// when a start fails half-way (a kube-apiserver slow to serve the CRDs on a
// loaded machine): the second start finds the first one's namespaces,
// bindings and Nodes in etcd and must take them, not fail on them forever.
func TestIntegrationAShootClusterStartsAgainOnItsData(t *testing.T) {
	requireAssets(t)
	// Every Shoot gets the hypervisor operator's CRDs here, only a
	// control-plane cluster the c5c3 ControlPlane's.
	c, err := NewClusters(t.TempDir(), []CRDs{ParseCRDs("../../cluster/crds/hypervisor-operator"), ParseCRDs("control-plane=../../cluster/crds/c5c3")}, []string{"rook-ceph"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	const k, uid = "garden-c5c3.hv-pool-a", "2f1c6a3e-0000-4000-8000-000000000001"
	w := Worker{Labels: map[string]string{"c5c3.io/pool": "hv-pool-a"}, Zones: []string{"eu-de-1a", "eu-de-1b"}, Machines: 50}
	nodes := w.Nodes(k, 3)

	_, first, err := c.start(k, uid, c.dirs("hypervisor"), nodes)
	if err != nil {
		t.Fatalf("first start: %v", err)
	}
	if err := first.APIServer.Stop(); err != nil {
		t.Fatal(err)
	}
	info, second, err := c.start(k, uid, c.dirs("hypervisor"), nodes, "DenyServiceExternalIPs")
	if err != nil {
		t.Fatalf("a start on the data of an earlier one: %v", err)
	}
	t.Cleanup(func() { _ = second.APIServer.Stop() }) //nolint:errcheck // best effort

	cfg, err := clientcmd.RESTConfigFromKubeConfig(info.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The worker's first three machines, over its two zones in turn.
	for i, zone := range []string{"eu-de-1a", "eu-de-1b", "eu-de-1a"} {
		name := fmt.Sprintf("%s-node-%d", k, i)
		node, err := cs.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := node.Labels["c5c3.io/pool"]; got != "hv-pool-a" {
			t.Errorf("%s: c5c3.io/pool label = %q, want hv-pool-a", name, got)
		}
		if got := node.Labels[corev1.LabelTopologyZone]; got != zone {
			t.Errorf("%s: zone %q, want %q", name, got, zone)
		}
	}
	if l, err := cs.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{}); err != nil || len(l.Items) != 3 {
		t.Errorf("the cluster has %d node(s) (%v), want the 3 of -shoot-nodes", len(l.Items), err)
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Get(context.Background(), gardenerAdminGroups[0], metav1.GetOptions{}); err != nil {
		t.Error(err)
	}

	// The CRDs of its kind, and not another kind's.
	servesHypervisorCRDsOnly(t, cs)

	// It admits as a Shoot does: the Shoot's own plugins (a Service with
	// externalIPs refused) and NodeRestriction (a node's kubelet may label
	// its node, but not under node-restriction.kubernetes.io/).
	deniesExternalIPs(t, cs)
	kubelet := rest.CopyConfig(cfg)
	node := k + "-node-0"
	kubelet.Impersonate = rest.ImpersonationConfig{UserName: "system:node:" + node, Groups: []string{"system:nodes", "system:authenticated"}}
	kcs, err := kubernetes.NewForConfig(kubelet)
	if err != nil {
		t.Fatal(err)
	}
	for label, refused := range map[string]bool{"example.com/rack": false, "c5c3.io.node-restriction.kubernetes.io/cloud": true} {
		_, err := kcs.CoreV1().Nodes().Patch(context.Background(), node, types.MergePatchType,
			[]byte(`{"metadata":{"labels":{"`+label+`":"x"}}}`), metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}})
		if refused != (err != nil) || (refused && !kerrors.IsForbidden(err)) {
			t.Errorf("%s's kubelet setting %s on it: %v (want refused: %t)", node, label, err, refused)
		}
	}
}

// TestIntegrationASpareClusterServesTheNextShootOfItsKind starts a spare
// cluster for hypervisor pools, as the demo does before any Shoot exists: a
// Shoot of another kind, or enabling other admission plugins, does not take
// it; the next hypervisor pool's Shoot does, and gets what a cluster
// started for it gets: its kind's CRDs, its Nodes, its admin kubeconfig
// under its name, the plugins it enables.
func TestIntegrationASpareClusterServesTheNextShootOfItsKind(t *testing.T) {
	requireAssets(t)
	dir := t.TempDir()
	c, err := NewClusters(dir, []CRDs{ParseCRDs("hypervisor=../../cluster/crds/hypervisor-operator"), ParseCRDs("control-plane=../../cluster/crds/c5c3")}, []string{"rook-ceph"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	c.MaxNodes = 3
	plugins := []string{"DenyServiceExternalIPs"}
	c.Spares([]Spare{{Kind: "hypervisor", N: 1}}, plugins)

	c.mu.Lock()
	other, unplugged := c.takeSpare("control-plane", plugins), c.takeSpare("hypervisor", nil)
	c.mu.Unlock()
	if other != nil || unplugged != nil {
		t.Fatalf("a control-plane Shoot took the hypervisor pools' spare (%t), a Shoot without its plugins too (%t)", other != nil, unplugged != nil)
	}

	const k, uid = "garden-c5c3.hv-pool-a", "2f1c6a3e-0000-4000-8000-000000000002"
	w := Worker{Labels: map[string]string{"c5c3.io/pool": "hv-pool-a"}, Zones: []string{"eu-de-1a"}, Machines: 2}
	spec := Spec{UID: uid, Kind: "hypervisor", Worker: w, Plugins: plugins}
	if _, _, err := c.Ensure("garden-c5c3", "hv-pool-a", spec); err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	left := len(c.spares)
	c.mu.Unlock()
	if left != 0 {
		t.Fatalf("%d spare(s) left after a hypervisor pool's Shoot, want its spare taken", left)
	}
	var info Cluster
	deadline := time.Now().Add(3 * time.Minute)
	for serves := false; !serves; {
		if time.Now().After(deadline) {
			t.Fatal("the Shoot's cluster does not serve after 3 minutes")
		}
		time.Sleep(200 * time.Millisecond)
		info, serves, err = c.Ensure("garden-c5c3", "hv-pool-a", spec)
		if err != nil {
			t.Fatal(err)
		}
	}
	if info.UID != uid {
		t.Errorf("the cluster is Shoot %q's, want %q's", info.UID, uid)
	}
	kc, err := os.ReadFile(filepath.Join(dir, k+".kubeconfig"))
	if err != nil {
		t.Fatalf("the Shoot's admin kubeconfig: %v", err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kc)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	l, err := cs.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Items) != 2 || l.Items[0].Labels["c5c3.io/pool"] != "hv-pool-a" {
		t.Errorf("the cluster has %d Node(s), want the worker's 2 machines of hv-pool-a", len(l.Items))
	}
	if _, err := cs.CoreV1().Namespaces().Get(context.Background(), "rook-ceph", metav1.GetOptions{}); err != nil {
		t.Errorf("namespace rook-ceph: %v", err)
	}
	servesHypervisorCRDsOnly(t, cs)
	deniesExternalIPs(t, cs)
}

// servesHypervisorCRDsOnly fails unless the cluster serves the hypervisor
// operator's CRDs and not the c5c3 ControlPlane's.
func servesHypervisorCRDsOnly(t *testing.T, cs kubernetes.Interface) {
	t.Helper()
	groups, err := cs.Discovery().ServerGroups()
	if err != nil {
		t.Fatal(err)
	}
	served := map[string]bool{}
	for _, g := range groups.Groups {
		served[g.Name] = true
	}
	if !served["kvm.cloud.sap"] || served["c5c3.io"] {
		t.Errorf("a hypervisor pool's cluster serves kvm.cloud.sap: %t and c5c3.io: %t, want the first only", served["kvm.cloud.sap"], served["c5c3.io"])
	}
}

// deniesExternalIPs fails unless the cluster refuses a Service with
// externalIPs, as a Shoot enabling DenyServiceExternalIPs does.
func deniesExternalIPs(t *testing.T, cs kubernetes.Interface) {
	t.Helper()
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "intercept", Namespace: "default"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 53}}, ExternalIPs: []string{"10.0.0.53"}}}
	if _, err := cs.CoreV1().Services("default").Create(context.Background(), svc, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); !kerrors.IsForbidden(err) || !strings.Contains(err.Error(), "external IPs") {
		t.Errorf("a Service with externalIPs, the Shoot enabling DenyServiceExternalIPs: %v, want Forbidden", err)
	}
}

// requireAssets skips the test without the kube-apiserver and etcd it
// starts, or fails it where integration tests must run (CI).
func requireAssets(t *testing.T) {
	t.Helper()
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		msg := "no KUBEBUILDER_ASSETS (kube-apiserver, etcd): run make tools and export the variables of tools/upstream/build.sh --env"
		if os.Getenv("REQUIRE_INTEGRATION") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
}
