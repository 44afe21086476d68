package secretcopy

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/consumer-plane/apis/kubernetes/v1alpha1"
	"github.com/c5c3/consumer-plane/provider/internal/clients/remotekube"
	"github.com/c5c3/consumer-plane/provider/internal/controller/kubernetes/kubernetestest"
	"github.com/c5c3/consumer-plane/test/kubetest"
)

// One API server plays both clusters: the management cluster (namespace
// mgmt holds the connection secret) and the remote one (namespace remote),
// reached through a ProviderConfig's kubeconfig.
func TestMain(m *testing.M) {
	os.Exit(kubetest.Main(m, "../../../../package/crds"))
}

// patience bounds every wait. A managed resource deleted within 30 s of
// its create waits that long for the create to be confirmed gone
// (crossplane-runtime's creation grace period), as the last subtest does.
const patience = 45 * time.Second

// TestSecretCopyIntegration copies a CephX key as the cloud's composition
// does, and checks that its value reaches the remote Secret and nothing
// else: not the SecretCopy, not its events, not an annotation of the remote
// Secret (provider-kubernetes' patchesFrom left it in all three, #40).
func TestSecretCopyIntegration(t *testing.T) {
	kube := start(t)
	ctx := context.Background()
	const key = "AQBx3ZtmAAAAABAAk1Vd0cS0c2VjcmV0LWNlcGh4LWtleQ=="
	for _, ns := range []string{"mgmt", "remote"} {
		if err := kube.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !kerrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	source := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "team-a-prod-ceph-client", Namespace: "mgmt"},
		Data: map[string][]byte{"key": []byte(key), "mon_host": []byte("[v2:10.0.0.1:3300]")}}
	foreign := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "someone-elses", Namespace: "remote"}, Data: map[string][]byte{"key": []byte("theirs")}}
	kubernetestest.ProviderConfig(t, kube, "control-plane")
	for _, o := range []client.Object{source, foreign} {
		if err := kube.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	cp := secretCopy("team-a-prod-st-pool-a-ceph-client", "ceph-client-st-pool-a", source.Name)
	if err := kube.Create(ctx, cp); err != nil {
		t.Fatal(err)
	}

	t.Run("the key reaches the remote Secret", func(t *testing.T) {
		got := waitSecret(ctx, t, kube, "ceph-client-st-pool-a", func(s *corev1.Secret) error {
			if string(s.Data["key"]) != key || string(s.Data["mon_host"]) != "[v2:10.0.0.1:3300]" || string(s.Data["entity"]) != "client.team-a-prod" {
				return fmt.Errorf("data has keys %v, not yet the copied ones", keys(s.Data))
			}
			return nil
		})
		if got.Labels[LabelCopiedBy] != cp.Name || got.Labels["c5c3.io/cloud"] != "team-a-prod" {
			t.Errorf("labels = %v, want %s=%s and the target's", got.Labels, LabelCopiedBy, cp.Name)
		}
		waitReady(ctx, t, kube, cp.Name)
	})

	t.Run("the key is nowhere but in the two Secrets", func(t *testing.T) {
		got := &v1alpha1.SecretCopy{}
		if err := kube.Get(ctx, client.ObjectKey{Name: cp.Name}, got); err != nil {
			t.Fatal(err)
		}
		remote := &corev1.Secret{}
		if err := kube.Get(ctx, client.ObjectKey{Namespace: "remote", Name: "ceph-client-st-pool-a"}, remote); err != nil {
			t.Fatal(err)
		}
		events := &corev1.EventList{}
		if err := kube.List(ctx, events); err != nil {
			t.Fatal(err)
		}
		for what, o := range map[string]any{"the SecretCopy": got, "the remote Secret's metadata": remote.ObjectMeta, "the events": events} {
			if leaks(t, o, key) {
				t.Errorf("%s holds the copied key", what)
			}
		}
	})

	t.Run("a rotated key is copied again", func(t *testing.T) {
		const rotated = "AQBx3ZtmAAAAABAAcm90YXRlZC1jZXBoeC1rZXk="
		source.Data["key"] = []byte(rotated)
		if err := kube.Update(ctx, source); err != nil {
			t.Fatal(err)
		}
		waitSecret(ctx, t, kube, "ceph-client-st-pool-a", func(s *corev1.Secret) error {
			if string(s.Data["key"]) != rotated {
				return fmt.Errorf("the key is not the rotated one yet")
			}
			return nil
		})
	})

	t.Run("a Secret the copy did not write is refused, not taken over", func(t *testing.T) {
		other := secretCopy("takes-someone-elses", foreign.Name, source.Name)
		if err := kube.Create(ctx, other); err != nil {
			t.Fatal(err)
		}
		waitSynced(ctx, t, kube, other.Name, "was not written by this SecretCopy")
		s := &corev1.Secret{}
		if err := kube.Get(ctx, client.ObjectKeyFromObject(foreign), s); err != nil {
			t.Fatal(err)
		}
		if string(s.Data["key"]) != "theirs" || len(s.Data) != 1 {
			t.Errorf("the foreign Secret was written: keys %v", keys(s.Data))
		}
		if err := kube.Delete(ctx, other); err != nil {
			t.Fatal(err)
		}
		waitGone(ctx, t, kube, &v1alpha1.SecretCopy{}, client.ObjectKey{Name: other.Name})
		if err := kube.Get(ctx, client.ObjectKeyFromObject(foreign), s); err != nil {
			t.Errorf("deleting the refused copy deleted the foreign Secret: %v", err)
		}
	})

	// The provider reads every ProviderConfig's Secret: the admin
	// kubeconfigs of the garden and the pool clusters, Ceph's admin keys. A
	// SecretCopy must not carry one out of the management cluster, nor read
	// a namespace the platform did not name.
	for _, c := range []struct {
		what, source, namespace, says string
	}{
		{"a source in a namespace the provider does not copy from is refused, naming its flag", foreign.Name, "remote",
			`spec.forProvider.source.namespace "remote" is not a namespace the provider copies Secrets from: mgmt (its flag --secret-copy-source-namespaces)`},
		{"a ProviderConfig's Secret is refused, naming the ProviderConfig", "control-plane-kubeconfig", "mgmt",
			"spec.forProvider.source mgmt/control-plane-kubeconfig is read by ProviderConfig.kubernetes.provider.c5c3.io control-plane: a ProviderConfig's Secret never leaves the management cluster"},
	} {
		t.Run(c.what, func(t *testing.T) {
			target := "refused-" + c.source
			refused := secretCopy("copies-"+c.source, target, c.source)
			refused.Spec.ForProvider.Source.Namespace = c.namespace
			refused.Spec.ForProvider.Keys = []v1alpha1.KeyCopy{{From: "key"}}
			if c.source == "control-plane-kubeconfig" {
				refused.Spec.ForProvider.Keys = []v1alpha1.KeyCopy{{From: "kubeconfig"}}
			}
			if err := kube.Create(ctx, refused); err != nil {
				t.Fatal(err)
			}
			waitSynced(ctx, t, kube, refused.Name, c.says)
			if err := kube.Get(ctx, client.ObjectKey{Namespace: "remote", Name: target}, &corev1.Secret{}); !kerrors.IsNotFound(err) {
				t.Errorf("the refused copy wrote Secret remote/%s: %v", target, err)
			}
			if err := kube.Delete(ctx, refused); err != nil {
				t.Fatal(err)
			}
		})
	}

	t.Run("a key the source does not hold is waited for, by name", func(t *testing.T) {
		waiting := secretCopy("waits-for-a-key", "waiting", source.Name)
		waiting.Spec.ForProvider.Keys = append(waiting.Spec.ForProvider.Keys, v1alpha1.KeyCopy{From: "not-there-yet"})
		if err := kube.Create(ctx, waiting); err != nil {
			t.Fatal(err)
		}
		waitSynced(ctx, t, kube, waiting.Name, `to hold key "not-there-yet" (spec.forProvider.keys[2].from)`)
	})

	t.Run("deleting the copy deletes the remote Secret", func(t *testing.T) {
		if err := kube.Delete(ctx, cp); err != nil {
			t.Fatal(err)
		}
		waitGone(ctx, t, kube, &corev1.Secret{}, client.ObjectKey{Namespace: "remote", Name: "ceph-client-st-pool-a"})
		waitGone(ctx, t, kube, &v1alpha1.SecretCopy{}, client.ObjectKey{Name: cp.Name})
	})
}

func secretCopy(name, target, source string) *v1alpha1.SecretCopy {
	return &v1alpha1.SecretCopy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.SecretCopySpec{
			ClusterManagedResourceSpec: xpv2.ClusterManagedResourceSpec{ProviderConfigReference: &xpv2.Reference{Name: "control-plane"}},
			ForProvider: v1alpha1.SecretCopyParameters{
				Source:   v1alpha1.SecretSource{Namespace: "mgmt", Name: source},
				Keys:     []v1alpha1.KeyCopy{{From: "key"}, {From: "mon_host"}},
				Literals: map[string]string{"entity": "client.team-a-prod"},
				Target:   v1alpha1.SecretTarget{Namespace: "remote", Name: target, Labels: map[string]string{"c5c3.io/cloud": "team-a-prod"}},
			},
		},
	}
}

// leaks says whether o, as JSON, holds v or v in base64.
func leaks(t *testing.T, o any, v string) bool {
	t.Helper()
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Contains(b, []byte(v)) || bytes.Contains(b, []byte(base64.StdEncoding.EncodeToString([]byte(v))))
}

func keys(m map[string][]byte) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// start runs the controller copying from namespace mgmt only, where the
// ProviderConfig's kubeconfig is too.
func start(t *testing.T) client.Client {
	t.Helper()
	return kubernetestest.Start(t, func(mgr ctrl.Manager, o controller.Options, c *remotekube.Clients) error {
		return Setup(mgr, o, c, []string{"mgmt"})
	})
}

func until(t *testing.T, what string, check func() error) {
	t.Helper()
	kubetest.Until(t, what, patience, check)
}

func waitSecret(ctx context.Context, t *testing.T, kube client.Client, name string, ok func(*corev1.Secret) error) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{}
	until(t, "remote Secret "+name, func() error {
		if err := kube.Get(ctx, client.ObjectKey{Namespace: "remote", Name: name}, s); err != nil {
			return err
		}
		return ok(s)
	})
	return s
}

func waitReady(ctx context.Context, t *testing.T, kube client.Client, name string) {
	t.Helper()
	until(t, "SecretCopy "+name+" Ready", func() error {
		c := &v1alpha1.SecretCopy{}
		if err := kube.Get(ctx, client.ObjectKey{Name: name}, c); err != nil {
			return err
		}
		if r := c.GetCondition(xpv2.TypeReady); r.Status != corev1.ConditionTrue {
			return fmt.Errorf("Ready is %s: %s; Synced: %s", r.Status, r.Message, c.GetCondition(xpv2.TypeSynced).Message)
		}
		return nil
	})
}

func waitSynced(ctx context.Context, t *testing.T, kube client.Client, name, says string) {
	t.Helper()
	until(t, "SecretCopy "+name+" says "+says, func() error {
		c := &v1alpha1.SecretCopy{}
		if err := kube.Get(ctx, client.ObjectKey{Name: name}, c); err != nil {
			return err
		}
		if s := c.GetCondition(xpv2.TypeSynced); s.Status != corev1.ConditionFalse || !strings.Contains(s.Message, says) {
			return fmt.Errorf("Synced is %s: %q", s.Status, s.Message)
		}
		return nil
	})
}

func waitGone(ctx context.Context, t *testing.T, kube client.Client, o client.Object, key client.ObjectKey) {
	t.Helper()
	until(t, fmt.Sprintf("%T %s gone", o, key), func() error {
		err := kube.Get(ctx, key, o)
		if kerrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if c, ok := o.(*v1alpha1.SecretCopy); ok {
			return fmt.Errorf("still there, Synced: %s", c.GetCondition(xpv2.TypeSynced).Message)
		}
		return fmt.Errorf("still there")
	})
}
