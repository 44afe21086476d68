package agent_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	kvmv1 "github.com/cobaltcore-dev/openstack-hypervisor-operator/api/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ovsv1alpha1 "github.com/c5c3/consumer-plane/agents/apis/ovs/v1alpha1"
	storagev1alpha1 "github.com/c5c3/consumer-plane/agents/apis/storage/v1alpha1"
	"github.com/c5c3/consumer-plane/internal/agentbundle"
	"github.com/c5c3/consumer-plane/test/kubetest"
)

func TestMain(m *testing.M) {
	for _, add := range []func(*runtime.Scheme) error{kvmv1.AddToScheme, ovsv1alpha1.AddToScheme, storagev1alpha1.AddToScheme} {
		if err := add(clientgoscheme.Scheme); err != nil {
			panic(err)
		}
	}
	os.Exit(kubetest.Main(m, "../../../cluster/crds/hypervisor-operator", "../../../cluster/crds/agents"))
}

// apply creates every object of the agents' bundle — what the pool
// functions place into pool clusters (internal/agentbundle, kept equal to
// cluster/agents by make generate).
func apply(t *testing.T, kube client.Client) {
	if err := kube.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "rook-ceph"}}); err != nil {
		t.Fatal(err)
	}
	for _, set := range []agentbundle.Set{agentbundle.Hypervisor, agentbundle.Storage} {
		objs, err := agentbundle.Objects(set, agentbundle.Images{})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range objs {
			u := &unstructured.Unstructured{Object: m.Object}
			// The CRDs are installed already (TestMain).
			if err := kube.Create(context.Background(), u); err != nil && !apierrors.IsAlreadyExists(err) {
				t.Fatalf("%s %s: %v", u.GetKind(), u.GetName(), err)
			}
		}
	}
}

// as is a client authenticated as a node agent's ServiceAccount on node
// (empty: a token that names no node), through impersonation.
func as(t *testing.T, sa, namespace, node string) client.Client {
	cfg := kubetest.Config(t)
	cfg.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:" + namespace + ":" + sa,
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"},
	}
	if node != "" {
		cfg.Impersonate.Extra = map[string][]string{"authentication.kubernetes.io/node-name": {node}}
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// denied waits for the policy to be in force (policies load asynchronously)
// and checks the request is refused with a message containing want.
func denied(t *testing.T, what, want string, do func() error) {
	t.Helper()
	var err error
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if err = do(); err != nil && strings.Contains(err.Error(), want) {
			return
		}
	}
	t.Fatalf("%s: got %v, want a refusal containing %q", what, err, want)
}

func allowed(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// TestIntegrationAgentManifests applies the agents' bundle to a real
// kube-apiserver and checks that each agent, authenticated as its
// ServiceAccount on a node, may write that node's objects and no other's.
func TestIntegrationAgentManifests(t *testing.T) {
	kube := kubetest.Client(t)
	apply(t, kube)
	ctx := context.Background()
	for _, n := range []string{"node-a", "node-b"} {
		allowed(t, "hypervisor "+n, kube.Create(ctx, &kvmv1.Hypervisor{ObjectMeta: metav1.ObjectMeta{Name: n}}))
	}

	hvA := as(t, "hypervisor-agent", "c5c3-agents", "node-a")
	patchStatus := func(c client.Client, node string) error {
		hv := &kvmv1.Hypervisor{}
		if err := c.Get(ctx, client.ObjectKey{Name: node}, hv); err != nil {
			return err
		}
		orig := hv.DeepCopy()
		hv.Status.LibVirtVersion = "10.0.0"
		return c.Status().Patch(ctx, hv, client.MergeFrom(orig))
	}
	denied(t, "hypervisor agent of node-a writing node-b", "a node agent may only write its own node's objects: hypervisors of node-b is not node node-a",
		func() error { return patchStatus(hvA, "node-b") })
	allowed(t, "hypervisor agent writing its node", patchStatus(hvA, "node-a"))
	denied(t, "a token without a node", "pod-bound ServiceAccount token", func() error {
		return patchStatus(as(t, "hypervisor-agent", "c5c3-agents", ""), "node-a")
	})
	denied(t, "the hypervisor agent creating an Eviction", "forbidden", func() error {
		return hvA.Create(ctx, &kvmv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "x"}, Spec: kvmv1.EvictionSpec{Hypervisor: "node-a", Reason: "r"}})
	})

	haA := as(t, "ha-agent", "c5c3-agents", "node-a")
	evict := func(node string) error {
		return haA.Create(ctx, &kvmv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: node + "-ha"}, Spec: kvmv1.EvictionSpec{Hypervisor: node, Reason: "test"}})
	}
	denied(t, "HA agent of node-a evicting node-b", "evictions of node-b is not node node-a", func() error { return evict("node-b") })
	allowed(t, "HA agent evicting its node", evict("node-a"))
	// Another node's Eviction (made by an operator) cannot be turned into
	// this node's by an update: the policy checks the new object's node, and
	// the Eviction CRD keeps spec.hypervisor immutable, so the old node
	// cannot change. The HA agent's role grants no updates; grant them here
	// to show the CRD holds should a role ever do so.
	grantUpdate := []client.Object{
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "test-evictions-update"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{"kvm.cloud.sap"}, Resources: []string{"evictions"}, Verbs: []string{"update"}}}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "test-evictions-update"},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "test-evictions-update"},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: "c5c3-agents", Name: "ha-agent"}}},
	}
	for _, o := range grantUpdate {
		allowed(t, "granting the HA agent updates of Evictions", kube.Create(ctx, o))
	}
	allowed(t, "an operator evicting node-b", kube.Create(ctx, &kvmv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "node-b-operator"},
		Spec: kvmv1.EvictionSpec{Hypervisor: "node-b", Reason: "maintenance"}}))
	denied(t, "HA agent of node-a moving node-b's Eviction to node-a", "spec.hypervisor: Invalid value: \"node-a\": Value is immutable", func() error {
		e := &kvmv1.Eviction{}
		if err := kube.Get(ctx, client.ObjectKey{Name: "node-b-operator"}, e); err != nil {
			return err
		}
		e.Spec.Hypervisor = "node-a"
		return haA.Update(ctx, e)
	})
	for _, o := range grantUpdate {
		allowed(t, "revoking the grant", kube.Delete(ctx, o))
	}

	ovsA := as(t, "ovs-agent", "c5c3-agents", "node-a")
	ovsNode := func(node string) error {
		return ovsA.Create(ctx, &ovsv1alpha1.OVSNode{ObjectMeta: metav1.ObjectMeta{Name: node}})
	}
	denied(t, "OVS agent of node-a creating node-b's OVSNode", "ovsnodes of node-b is not node node-a", func() error { return ovsNode("node-b") })
	allowed(t, "OVS agent creating its OVSNode", ovsNode("node-a"))
	n := &corev1.Node{}
	if err := ovsA.Get(ctx, client.ObjectKey{Name: "node-a"}, n); !apierrors.IsNotFound(err) {
		t.Fatalf("OVS agent reading nodes: %v, want NotFound (allowed, none exists)", err)
	}

	storage := as(t, "storage-agent", "rook-ceph", "node-a")
	allowed(t, "storage agent publishing", storage.Create(ctx, &storagev1alpha1.CephStatus{ObjectMeta: metav1.ObjectMeta{Name: "ceph"}}))
	denied(t, "storage agent writing Hypervisors", "forbidden", func() error { return patchStatus(storage, "node-a") })
	// Its leader lease, and no other lease of rook-ceph: leader election
	// makes, reads and renews c5c3-storage-agent-<--name> alone.
	own := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "c5c3-storage-agent-ceph", Namespace: "rook-ceph"}}
	allowed(t, "storage agent taking its leader lease", storage.Create(ctx, own))
	allowed(t, "storage agent reading its lease", storage.Get(ctx, client.ObjectKeyFromObject(own), own))
	own.Spec.HolderIdentity = ptr.To("node-a")
	allowed(t, "storage agent renewing its lease", storage.Update(ctx, own))
	other := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "rook-ceph-operator", Namespace: "rook-ceph"}}
	allowed(t, "Rook's lease", kube.Create(ctx, other))
	denied(t, "storage agent reading another lease", "forbidden", func() error { return storage.Get(ctx, client.ObjectKeyFromObject(other), other) })
	other.Spec.HolderIdentity = ptr.To("node-a")
	denied(t, "storage agent taking another lease over", "forbidden", func() error { return storage.Update(ctx, other) })
}
