package nodelabel

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/consumer-plane/apis/kubernetes/v1alpha1"
	"github.com/c5c3/consumer-plane/internal/pool"
	"github.com/c5c3/consumer-plane/provider/internal/clients/remotekube"
	"github.com/c5c3/consumer-plane/provider/internal/controller/kubernetes/kubernetestest"
	"github.com/c5c3/consumer-plane/test/kubetest"
)

// One API server plays both clusters: the management cluster (namespace
// mgmt holds the kubeconfig) and the pool's, whose nodes are labelled. It
// authorizes and admits kubelets as a Shoot's does (NodeRestriction).
func TestMain(m *testing.M) {
	os.Exit(kubetest.MainNodeRestricted(m, "../../../../package/crds"))
}

const (
	patience = 45 * time.Second
	// key is the hypervisor pools' placement label.
	key = pool.LabelCloud
)

// TestNodeLabelIntegration labels a pool cluster's nodes with the cloud each
// serves, as a hypervisor pool does: named nodes get their value, a node
// that moves changes it, a node no longer named loses the key (and one
// labelled by hand too), a node named before it exists is waited for, the
// nodes' other labels stay, and deleting the NodeLabel removes the key.
func TestNodeLabelIntegration(t *testing.T) {
	kube := start(t)
	ctx := context.Background()
	if err := kube.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "mgmt"}}); err != nil && !kerrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	for _, n := range []string{"node-1", "node-2", "node-3"} {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n, Labels: map[string]string{"kubernetes.io/hostname": n}}}
		if n == "node-3" {
			node.Labels[key] = "set-by-hand"
		}
		if err := kube.Create(ctx, node); err != nil {
			t.Fatal(err)
		}
	}
	pc, _ := kubernetestest.ProviderConfig(t, kube, "pool")
	nl := &v1alpha1.NodeLabel{ObjectMeta: metav1.ObjectMeta{Name: "hv-pool-a-clouds"}, Spec: v1alpha1.NodeLabelSpec{
		ClusterManagedResourceSpec: xpv2.ClusterManagedResourceSpec{ProviderConfigReference: &xpv2.Reference{Name: pc.Name}},
		ForProvider:                v1alpha1.NodeLabelParameters{Key: key, Values: map[string]string{"node-1": "team-a-prod", "node-2": "team-b-staging", "node-4": "team-a-prod"}}}}
	for _, o := range []client.Object{nl} {
		if err := kube.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("the named nodes carry their cloud, and only they", func(t *testing.T) {
		labelsAre(ctx, t, kube, map[string]string{"node-1": "team-a-prod", "node-2": "team-b-staging", "node-3": ""})
		until(t, "the NodeLabel Ready, reporting node-4 missing", func() error {
			got := &v1alpha1.NodeLabel{}
			if err := kube.Get(ctx, client.ObjectKeyFromObject(nl), got); err != nil {
				return err
			}
			if c := got.GetCondition(xpv2.TypeReady); c.Status != corev1.ConditionTrue || got.Status.AtProvider.Labelled != 2 || !slices.Equal(got.Status.AtProvider.Missing, []string{"node-4"}) {
				return fmt.Errorf("Ready %s, atProvider %+v", c.Status, got.Status.AtProvider)
			}
			return nil
		})
		n := &corev1.Node{}
		if err := kube.Get(ctx, client.ObjectKey{Name: "node-1"}, n); err != nil {
			t.Fatal(err)
		}
		if n.Labels["kubernetes.io/hostname"] != "node-1" {
			t.Errorf("node-1 lost its other labels: %v", n.Labels)
		}
	})

	t.Run("a node's own kubelet can neither take another cloud's label nor drop its own", func(t *testing.T) {
		// A compromised node that could set the placement label would
		// lure another cloud's nova-compute, with that cloud's
		// credentials and Ceph key, onto itself: NodeRestriction keeps
		// kubelets off labels under node-restriction.kubernetes.io/.
		patch := func(node, v string) error {
			value := "null"
			if v != "" {
				value = `"` + v + `"`
			}
			return kubetest.AsNode(t, node).Patch(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}},
				client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"`+key+`":`+value+`}}}`)))
		}
		for what, err := range map[string]error{
			"node-1 labels itself team-b-staging's":            patch("node-1", "team-b-staging"),
			"node-1 drops its label":                           patch("node-1", ""),
			"node-3, of no cloud, labels itself team-a-prod's": patch("node-3", "team-a-prod"),
		} {
			if !kerrors.IsForbidden(err) || !strings.Contains(err.Error(), key) {
				t.Errorf("%s: %v, want Forbidden naming %s", what, err, key)
			}
		}
		// The same kubelet may label its node otherwise: what refused it
		// is the key, not a lack of rights.
		if err := kubetest.AsNode(t, "node-1").Patch(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}},
			client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"example.com/rack":"r1"}}}`))); err != nil {
			t.Errorf("node-1's kubelet labelling its node example.com/rack: %v", err)
		}
		labelsAre(ctx, t, kube, map[string]string{"node-1": "team-a-prod", "node-3": ""})
	})

	t.Run("a node that appears, moves or is no longer named follows", func(t *testing.T) {
		if err := kube.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-4"}}); err != nil {
			t.Fatal(err)
		}
		if err := kube.Get(ctx, client.ObjectKeyFromObject(nl), nl); err != nil {
			t.Fatal(err)
		}
		nl.Spec.ForProvider.Values = map[string]string{"node-1": "team-a-prod", "node-2": "team-a-prod", "node-4": "team-a-prod"}
		if err := kube.Update(ctx, nl); err != nil {
			t.Fatal(err)
		}
		labelsAre(ctx, t, kube, map[string]string{"node-1": "team-a-prod", "node-2": "team-a-prod", "node-3": "", "node-4": "team-a-prod"})
	})

	t.Run("a NodeLabel whose cluster is gone still deletes", func(t *testing.T) {
		// As a pool's: its kubeconfig Secret goes with the pool's Shoot.
		gonePC, gone := kubernetestest.ProviderConfig(t, kube, "gone")
		other := &v1alpha1.NodeLabel{ObjectMeta: metav1.ObjectMeta{Name: "gone-clouds"}, Spec: v1alpha1.NodeLabelSpec{
			ClusterManagedResourceSpec: xpv2.ClusterManagedResourceSpec{ProviderConfigReference: &xpv2.Reference{Name: gonePC.Name}},
			ForProvider:                v1alpha1.NodeLabelParameters{Key: "c5c3.io/other-cloud", Values: map[string]string{"node-1": "x"}}}}
		for _, o := range []client.Object{other} {
			if err := kube.Create(ctx, o); err != nil {
				t.Fatal(err)
			}
		}
		until(t, "the other NodeLabel Ready", func() error {
			got := &v1alpha1.NodeLabel{}
			if err := kube.Get(ctx, client.ObjectKeyFromObject(other), got); err != nil {
				return err
			}
			if c := got.GetCondition(xpv2.TypeReady); c.Status != corev1.ConditionTrue {
				return fmt.Errorf("Ready %s", c.Status)
			}
			return nil
		})
		if err := kube.Delete(ctx, gone); err != nil {
			t.Fatal(err)
		}
		// The provider sees the kubeconfig gone (its next poll cannot
		// connect) before the NodeLabel is deleted: deleted at once, its
		// reconcile could still read the Secret from the informer's cache
		// and reach the cluster (seen in CI).
		until(t, "the other NodeLabel cannot reach its cluster", func() error {
			got := &v1alpha1.NodeLabel{}
			if err := kube.Get(ctx, client.ObjectKeyFromObject(other), got); err != nil {
				return err
			}
			if c := got.GetCondition(xpv2.TypeSynced); c.Status != corev1.ConditionFalse {
				return fmt.Errorf("Synced %s", c.Status)
			}
			return nil
		})
		if err := kube.Delete(ctx, other); err != nil {
			t.Fatal(err)
		}
		until(t, "the NodeLabel of a gone cluster deleted", func() error {
			if err := kube.Get(ctx, client.ObjectKeyFromObject(other), &v1alpha1.NodeLabel{}); !kerrors.IsNotFound(err) {
				return fmt.Errorf("still there: %v", err)
			}
			return nil
		})
		// It went without the cluster (which, here, is still there to
		// show it): the label it set stays.
		n := &corev1.Node{}
		if err := kube.Get(ctx, client.ObjectKey{Name: "node-1"}, n); err != nil {
			t.Fatal(err)
		}
		if n.Labels["c5c3.io/other-cloud"] != "x" {
			t.Errorf("node-1's labels %v: the NodeLabel reached the cluster its kubeconfig no longer names", n.Labels)
		}
	})

	t.Run("deleting the NodeLabel removes the key from every node", func(t *testing.T) {
		if err := kube.Delete(ctx, nl); err != nil {
			t.Fatal(err)
		}
		labelsAre(ctx, t, kube, map[string]string{"node-1": "", "node-2": "", "node-3": "", "node-4": ""})
		until(t, "the NodeLabel gone", func() error {
			if err := kube.Get(ctx, client.ObjectKeyFromObject(nl), &v1alpha1.NodeLabel{}); !kerrors.IsNotFound(err) {
				return fmt.Errorf("still there: %v", err)
			}
			return nil
		})
	})
}

// labelsAre waits until each node carries the key with its value ("":
// without the key).
func labelsAre(ctx context.Context, t *testing.T, kube client.Client, want map[string]string) {
	t.Helper()
	until(t, fmt.Sprintf("the nodes' %s labels %v", key, want), func() error {
		for name, v := range want {
			n := &corev1.Node{}
			if err := kube.Get(ctx, client.ObjectKey{Name: name}, n); err != nil {
				return err
			}
			if have, ok := n.Labels[key]; have != v || ok != (v != "") {
				return fmt.Errorf("%s has %s=%q (set: %t)", name, key, have, ok)
			}
		}
		return nil
	})
}

// TestNodeLabelRepairsFromAWatch: with an hour between polls, a node
// relabelled behind the NodeLabel's back is set right within seconds, and
// a named node that registers late is labelled as it appears: the
// NodeLabel learns both from its watch of the cluster's nodes.
func TestNodeLabelRepairsFromAWatch(t *testing.T) {
	kube := kubernetestest.StartPolling(t, setup, time.Hour)
	ctx := context.Background()
	const watched = "example.com.node-restriction.kubernetes.io/watched"
	if err := kube.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "w-1"}}); err != nil {
		t.Fatal(err)
	}
	pc, _ := kubernetestest.ProviderConfig(t, kube, "watched")
	nl := &v1alpha1.NodeLabel{ObjectMeta: metav1.ObjectMeta{Name: "watched"}, Spec: v1alpha1.NodeLabelSpec{
		ClusterManagedResourceSpec: xpv2.ClusterManagedResourceSpec{ProviderConfigReference: &xpv2.Reference{Name: pc.Name}},
		ForProvider:                v1alpha1.NodeLabelParameters{Key: watched, Values: map[string]string{"w-1": "cloud-a", "w-2": "cloud-b"}}}}
	if err := kube.Create(ctx, nl); err != nil {
		t.Fatal(err)
	}
	valueIs := func(node, want string) func() error {
		return func() error {
			n := &corev1.Node{}
			if err := kube.Get(ctx, client.ObjectKey{Name: node}, n); err != nil {
				return err
			}
			if got := n.Labels[watched]; got != want {
				return fmt.Errorf("%s carries %s=%q", node, watched, got)
			}
			return nil
		}
	}
	kubetest.Until(t, "w-1 labelled cloud-a", patience, valueIs("w-1", "cloud-a"))
	t.Cleanup(func() { _ = kube.Delete(context.Background(), nl) }) //nolint:errcheck // the API server goes with the test binary

	// Not the NodeLabel's own writes: once it is Ready and quiet,
	// forged.
	kubetest.Until(t, "the NodeLabel Ready", patience, func() error {
		got := &v1alpha1.NodeLabel{}
		if err := kube.Get(ctx, client.ObjectKeyFromObject(nl), got); err != nil {
			return err
		}
		if c := got.GetCondition(xpv2.TypeReady); c.Status != corev1.ConditionTrue {
			return fmt.Errorf("Ready %s", c.Status)
		}
		return nil
	})
	time.Sleep(3 * time.Second)
	if err := kube.Patch(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "w-1"}},
		client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"`+watched+`":"cloud-b"}}}`))); err != nil {
		t.Fatal(err)
	}
	kubetest.Until(t, "w-1, relabelled cloud-b by hand, is cloud-a's again", 15*time.Second, valueIs("w-1", "cloud-a"))
	if err := kube.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "w-2"}}); err != nil {
		t.Fatal(err)
	}
	kubetest.Until(t, "w-2, registered late, is labelled cloud-b", 15*time.Second, valueIs("w-2", "cloud-b"))
}

func setup(mgr ctrl.Manager, o controller.Options, clients *remotekube.Clients) error {
	return Setup(mgr, o, clients, remotekube.NewNodes(8, time.Hour))
}

func start(t *testing.T) client.Client {
	t.Helper()
	return kubernetestest.Start(t, setup)
}

func until(t *testing.T, what string, check func() error) {
	t.Helper()
	kubetest.Until(t, what, patience, check)
}
