package clusteraccess

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/consumer-plane/apis/kubernetes/v1alpha1"
	"github.com/c5c3/consumer-plane/provider/internal/controller/kubernetes/kubernetestest"
	"github.com/c5c3/consumer-plane/test/kubetest"
)

// One API server plays both clusters: the management cluster (namespace
// mgmt holds the pool's kubeconfig and the issued one) and the pool's.
func TestMain(m *testing.M) {
	os.Exit(kubetest.Main(m, "../../../../package/crds"))
}

const patience = 45 * time.Second

func until(t *testing.T, what string, f func() error) {
	t.Helper()
	kubetest.Until(t, what, patience, f)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestClusterAccessIntegration issues a cloud's control plane the access
// to a pool it gets: with the kubeconfig published, the real API server
// lets it use its namespace and get, list by name and label its named
// nodes, and forbids everything else (another node, listing nodes,
// another namespace's Secrets, namespaces, cluster roles); a node added to
// the share becomes reachable; a ServiceAccount of the name that another
// made is refused, not taken over; its workloads run on its nodes only
// (the placement policy), and a node selector that would not be a label
// is refused; deleting the access deletes the ServiceAccount, its roles
// and its policy, and its token stops working.
func TestClusterAccessIntegration(t *testing.T) {
	kube := kubernetestest.Start(t, Setup)
	ctx := context.Background()
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "another-cloud"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "theirs", Namespace: "another-cloud"}, StringData: map[string]string{"k": "v"}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-2"}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-3"}},
	} {
		must(t, kube.Create(ctx, o))
	}
	pc, _ := kubernetestest.ProviderConfig(t, kube, "hypervisor-hv-pool-a")
	access := func(name, ns string, nodes ...string) *v1alpha1.ClusterAccess {
		return &v1alpha1.ClusterAccess{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.ClusterAccessSpec{
			ClusterManagedResourceSpec: xpv2.ClusterManagedResourceSpec{
				ProviderConfigReference:          &xpv2.Reference{Name: pc.Name},
				WriteConnectionSecretToReference: &xpv2.SecretReference{Namespace: "mgmt", Name: name},
			},
			ForProvider: v1alpha1.ClusterAccessParameters{Namespace: ns, ServiceAccount: "c5c3-control-plane", Nodes: nodes, Workloads: true,
				NodeSelector: map[string]v1alpha1.LabelValue{"c5c3.io.node-restriction.kubernetes.io/cloud": v1alpha1.LabelValue(strings.TrimPrefix(ns, "openstack-"))}}}}
	}
	ca := access("cloud-a-hv-pool-a", "openstack-cloud-a", "node-1")
	must(t, kube.Create(ctx, ca))

	// The control plane's client, from the published kubeconfig.
	var cp client.Client
	until(t, "the ClusterAccess Ready, its kubeconfig published", func() error {
		got := &v1alpha1.ClusterAccess{}
		if err := kube.Get(ctx, client.ObjectKeyFromObject(ca), got); err != nil {
			return err
		}
		if c := got.GetCondition(xpv2.TypeReady); c.Status != corev1.ConditionTrue {
			return fmt.Errorf("Ready %s: %s; Synced: %s", c.Status, c.Message, got.GetCondition(xpv2.TypeSynced).Message)
		}
		if exp := got.Status.AtProvider.ExpiresAt; exp == nil || time.Until(exp.Time) < 23*time.Hour {
			return fmt.Errorf("expiresAt %v, want a day from now (the default tokenLifetime)", exp)
		}
		s := &corev1.Secret{}
		if err := kube.Get(ctx, client.ObjectKey{Namespace: "mgmt", Name: ca.Name}, s); err != nil {
			return err
		}
		if string(s.Data[KeyNamespaces]) != "openstack-cloud-a" {
			return fmt.Errorf("the connection secret's namespaces is %q", s.Data[KeyNamespaces])
		}
		cfg, err := clientcmd.RESTConfigFromKubeConfig(s.Data[KeyKubeconfig])
		if err != nil {
			return err
		}
		if cfg.BearerToken == "" || len(cfg.CertData) > 0 {
			return errors.New("the kubeconfig holds no token, or a client certificate")
		}
		cp, err = client.New(cfg, client.Options{Scheme: clientgoscheme.Scheme})
		return err
	})
	cm := func(name string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "openstack-cloud-a"}}
	}
	label := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"c5c3.io/agent":"ready"}}}`))
	byName := func(n string) client.ListOption {
		return client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("metadata.name", n)}
	}
	inNamespace := metav1.ObjectMeta{Name: "shadow", Namespace: "openstack-cloud-a"}
	allowed := map[string]func() error{
		"get its node":                  func() error { return cp.Get(ctx, client.ObjectKey{Name: "node-1"}, &corev1.Node{}) },
		"list its node by name":         func() error { return cp.List(ctx, &corev1.NodeList{}, byName("node-1")) },
		"create in its namespace":       func() error { return cp.Create(ctx, cm("agents")) },
		"list Secrets of its namespace": func() error { return cp.List(ctx, &corev1.SecretList{}, client.InNamespace("openstack-cloud-a")) },
		"deploy nova-compute as the control plane does": func() error {
			return cp.Create(ctx, novaCompute("openstack-cloud-a"), client.DryRunAll)
		},
	}
	forbidden := map[string]func() error{
		"get another node": func() error { return cp.Get(ctx, client.ObjectKey{Name: "node-2"}, &corev1.Node{}) },
		// The placement label: a cloud that writes it lures another cloud's
		// nova-compute onto its node.
		"label its node":     func() error { return cp.Patch(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}}, label) },
		"label another node": func() error { return cp.Patch(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-3"}}, label) },
		"run a pod of its own making": func() error {
			return cp.Create(ctx, &corev1.Pod{ObjectMeta: inNamespace, Spec: corev1.PodSpec{NodeName: "node-3", Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}, client.DryRunAll)
		},
		"create a Service (externalIPs)": func() error {
			return cp.Create(ctx, &corev1.Service{ObjectMeta: inNamespace, Spec: corev1.ServiceSpec{
				ExternalIPs: []string{"192.0.2.1"}, Ports: []corev1.ServicePort{{Port: 443}}}}, client.DryRunAll)
		},
		"bind admin in its namespace": func() error {
			return cp.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: inNamespace,
				RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "admin"},
				Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "shadow", Namespace: "openstack-cloud-a"}}}, client.DryRunAll)
		},
		"mint a token of its own ServiceAccount": func() error {
			return cp.SubResource("token").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "c5c3-control-plane", Namespace: "openstack-cloud-a"}},
				&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(365 * 24 * 3600))}})
		},
		// A token that would outlive the access: the namespace's policy.
		"keep a token Secret of its ServiceAccount": func() error { return cp.Create(ctx, tokenSecret("openstack-cloud-a"), client.DryRunAll) },
		"list every node": func() error { return cp.List(ctx, &corev1.NodeList{}) },
		"read another namespace's Secret": func() error {
			return cp.Get(ctx, client.ObjectKey{Namespace: "another-cloud", Name: "theirs"}, &corev1.Secret{})
		},
		"list Secrets everywhere": func() error { return cp.List(ctx, &corev1.SecretList{}) },
		"list namespaces":         func() error { return cp.List(ctx, &corev1.NamespaceList{}) },
		"create a namespace": func() error {
			return cp.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "mine-now"}})
		},
		"list cluster roles": func() error { return cp.List(ctx, &rbacv1.ClusterRoleList{}) },
		"bind itself a cluster role": func() error {
			return cp.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "escalate"},
				RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
				Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "c5c3-control-plane", Namespace: "openstack-cloud-a"}}})
		},
	}
	for what, f := range allowed {
		if err := f(); err != nil {
			t.Errorf("the control plane may %s: %v", what, err)
		}
	}
	for what, f := range forbidden {
		if err := f(); !kerrors.IsForbidden(err) {
			t.Errorf("the control plane may not %s: got %v, want Forbidden", what, err)
		}
	}
	t.Run("a steady access issues no new token: what the API server defaults is no drift", func(t *testing.T) {
		// Every poll that finds a drift sets the objects again and issues a
		// token, which rewrites the connection secret, its copies and wakes
		// the cloud: in the demo every cloud's access did so at each poll,
		// because the policy's rules came back with scope "*".
		read := func() (*metav1.Time, string) {
			got := &v1alpha1.ClusterAccess{}
			must(t, kube.Get(ctx, client.ObjectKeyFromObject(ca), got))
			s := &corev1.Secret{}
			must(t, kube.Get(ctx, client.ObjectKey{Namespace: "mgmt", Name: ca.Name}, s))
			return got.Status.AtProvider.ExpiresAt, s.ResourceVersion
		}
		exp, rv := read()
		time.Sleep(4 * 2 * time.Second) // four polls
		if exp2, rv2 := read(); !exp2.Equal(exp) || rv2 != rv {
			t.Errorf("over four polls the token was issued again: expiresAt %v then %v, connection secret version %s then %s", exp, exp2, rv, rv2)
		}
	})
	t.Run("its workloads run on its nodes only, whoever makes them", func(t *testing.T) {
		// The placement policy: RBAC lets the cloud run DaemonSets, but not
		// say where; the policy does, for the cloud and for the DaemonSet
		// controller (here: the API server's admin) alike.
		elsewhere := func(f func(*corev1.PodSpec)) *appsv1.DaemonSet {
			ds := novaCompute("openstack-cloud-a")
			f(&ds.Spec.Template.Spec)
			return ds
		}
		until(t, "the placement policy in force: nova-compute selecting another cloud's nodes refused", func() error {
			err := cp.Create(ctx, elsewhere(func(s *corev1.PodSpec) { s.NodeSelector["c5c3.io.node-restriction.kubernetes.io/cloud"] = "cloud-b" }), client.DryRunAll)
			if !kerrors.IsForbidden(err) || !strings.Contains(err.Error(), "must select the nodes labelled c5c3.io.node-restriction.kubernetes.io/cloud=cloud-a") {
				return fmt.Errorf("got %v, want Forbidden naming c5c3.io.node-restriction.kubernetes.io/cloud=cloud-a", err)
			}
			return nil
		})
		refused := map[string]func() error{
			"a DaemonSet that selects no nodes": func() error {
				return cp.Create(ctx, elsewhere(func(s *corev1.PodSpec) { s.NodeSelector = nil }), client.DryRunAll)
			},
			"a DaemonSet naming another node": func() error {
				return cp.Create(ctx, elsewhere(func(s *corev1.PodSpec) { s.NodeName = "node-3" }), client.DryRunAll)
			},
			"a privileged DaemonSet mounting the node's root": func() error {
				return cp.Create(ctx, elsewhere(func(s *corev1.PodSpec) { s.Volumes = append(s.Volumes, hostPath("root", "/")) }), client.DryRunAll)
			},
			"a DaemonSet mounting the kubelet's credential": func() error {
				return cp.Create(ctx, elsewhere(func(s *corev1.PodSpec) { s.Volumes = append(s.Volumes, hostPath("kubelet", "/var/lib/kubelet")) }), client.DryRunAll)
			},
			"a DaemonSet mounting a path beside an allowed one (/var/lib/nova-other)": func() error {
				return cp.Create(ctx, elsewhere(func(s *corev1.PodSpec) { s.Volumes = append(s.Volumes, hostPath("other", "/var/lib/nova-other")) }), client.DryRunAll)
			},
			"moving nova-compute to another cloud's nodes": func() error {
				ds := novaCompute("openstack-cloud-a")
				if err := cp.Create(ctx, ds); err != nil {
					return fmt.Errorf("cannot create nova-compute: %w", err)
				}
				defer func() { _ = kube.Delete(ctx, ds) }()
				ds.Spec.Template.Spec.NodeSelector["c5c3.io.node-restriction.kubernetes.io/cloud"] = "cloud-b"
				return cp.Update(ctx, ds)
			},
			"a pod the cluster's admin makes on another node (as the DaemonSet controller would)": func() error {
				return kube.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "placed", Namespace: "openstack-cloud-a"},
					Spec: corev1.PodSpec{NodeName: "node-3", NodeSelector: map[string]string{"c5c3.io.node-restriction.kubernetes.io/cloud": "cloud-a"}, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}, client.DryRunAll)
			},
		}
		for what, f := range refused {
			if err := f(); !kerrors.IsForbidden(err) {
				t.Errorf("%s: got %v, want Forbidden", what, err)
			}
		}
		if err := kube.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "elsewhere", Namespace: "another-cloud"},
			Spec: corev1.PodSpec{NodeName: "node-3", Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}, client.DryRunAll); err != nil {
			t.Errorf("the policy reaches beyond the cloud's namespace: %v", err)
		}
	})

	n := &corev1.Node{}
	must(t, kube.Get(ctx, client.ObjectKey{Name: "node-3"}, n))
	if _, ok := n.Labels["c5c3.io/agent"]; ok {
		t.Error("node-3, not the cloud's, was labelled")
	}

	t.Run("a node added to the share becomes reachable", func(t *testing.T) {
		got := &v1alpha1.ClusterAccess{}
		must(t, kube.Get(ctx, client.ObjectKeyFromObject(ca), got))
		got.Spec.ForProvider.Nodes = []string{"node-1", "node-2"}
		must(t, kube.Update(ctx, got))
		until(t, "node-2 readable with the same kubeconfig", func() error {
			return cp.Get(ctx, client.ObjectKey{Name: "node-2"}, &corev1.Node{})
		})
		if err := cp.Get(ctx, client.ObjectKey{Name: "node-3"}, &corev1.Node{}); !kerrors.IsForbidden(err) {
			t.Errorf("node-3 with the grown access: got %v, want Forbidden", err)
		}
	})

	t.Run("a storage pool's access keeps ConfigMaps and Secrets and runs nothing", func(t *testing.T) {
		st := access("cloud-a-st-pool-a", "openstack-cloud-a-storage")
		st.Spec.ForProvider.Workloads, st.Spec.ForProvider.NodeSelector = false, nil
		must(t, kube.Create(ctx, st))
		var sc client.Client
		until(t, "its kubeconfig published", func() error {
			s := &corev1.Secret{}
			if err := kube.Get(ctx, client.ObjectKey{Namespace: "mgmt", Name: st.Name}, s); err != nil {
				return err
			}
			cfg, err := clientcmd.RESTConfigFromKubeConfig(s.Data[KeyKubeconfig])
			if err != nil {
				return err
			}
			sc, err = client.New(cfg, client.Options{Scheme: clientgoscheme.Scheme})
			if err != nil {
				return err
			}
			// The Role may follow the token by a moment.
			return sc.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "ceph", Namespace: "openstack-cloud-a-storage"}}, client.DryRunAll)
		})
		if err := sc.Create(ctx, novaCompute("openstack-cloud-a-storage"), client.DryRunAll); !kerrors.IsForbidden(err) {
			t.Errorf("a DaemonSet with the storage pool's access: got %v, want Forbidden", err)
		}
		if err := sc.List(ctx, &corev1.PodList{}, client.InNamespace("openstack-cloud-a-storage")); !kerrors.IsForbidden(err) {
			t.Errorf("listing pods with the storage pool's access: got %v, want Forbidden", err)
		}
		// The token is issued once the API server enforces the policy.
		if err := sc.Create(ctx, tokenSecret("openstack-cloud-a-storage"), client.DryRunAll); !kerrors.IsForbidden(err) || !strings.Contains(err.Error(), "service-account-token") {
			t.Errorf("a token Secret with the storage pool's access: got %v, want Forbidden naming the type", err)
		}
		must(t, kube.Delete(ctx, st))
	})

	t.Run("a node selector whose key is no label name is refused, naming the field", func(t *testing.T) {
		bad := access("cloud-c-hv-pool-a", "openstack-cloud-c")
		bad.Spec.ForProvider.NodeSelector = map[string]v1alpha1.LabelValue{"c5c3.io.node-restriction.kubernetes.io/cloud') || true || ('": "cloud-c"}
		must(t, kube.Create(ctx, bad))
		syncedFalse(t, kube, bad, "Synced False naming spec.forProvider.nodeSelector", "spec.forProvider.nodeSelector: key")
		if err := kube.Get(ctx, client.ObjectKey{Namespace: "openstack-cloud-c", Name: "c5c3-control-plane"}, &corev1.ServiceAccount{}); !kerrors.IsNotFound(err) {
			t.Errorf("the refused access made its ServiceAccount: %v", err)
		}
		must(t, kube.Delete(ctx, bad))
	})

	t.Run("a ServiceAccount of the name that another made is refused", func(t *testing.T) {
		must(t, kube.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "openstack-cloud-b"}}))
		must(t, kube.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "c5c3-control-plane", Namespace: "openstack-cloud-b"}}))
		other := access("cloud-b-hv-pool-a", "openstack-cloud-b")
		must(t, kube.Create(ctx, other))
		syncedFalse(t, kube, other, "the ClusterAccess refused, naming the label", "is not this ClusterAccess's")
		must(t, kube.Delete(ctx, other))
		until(t, "the refused ClusterAccess deleted, the foreign ServiceAccount kept", func() error {
			if err := kube.Get(ctx, client.ObjectKeyFromObject(other), &v1alpha1.ClusterAccess{}); !kerrors.IsNotFound(err) {
				return fmt.Errorf("still there: %v", err)
			}
			return kube.Get(ctx, client.ObjectKey{Namespace: "openstack-cloud-b", Name: "c5c3-control-plane"}, &corev1.ServiceAccount{})
		})
	})

	t.Run("an access whose cluster cannot be reached waits to be revoked, saying why", func(t *testing.T) {
		fpc, kc := kubernetestest.ProviderConfig(t, kube, "hypervisor-hv-pool-flaky")
		fa := access("cloud-d-hv-pool-flaky", "openstack-cloud-d", "node-1")
		fa.Spec.ProviderConfigReference.Name = fpc.Name
		must(t, kube.Create(ctx, fa))
		until(t, "its kubeconfig published", func() error {
			return kube.Get(ctx, client.ObjectKey{Namespace: "mgmt", Name: fa.Name}, &corev1.Secret{})
		})
		made := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "nova", Namespace: "openstack-cloud-d"}}
		// Once (CI at a887662, under load) this create was refused with
		// namespace not found just after the kubeconfig was published;
		// not reproduced since. Retried, a namespace that is really
		// missing still fails here, naming it.
		until(t, "a ConfigMap made in its namespace", func() error {
			if err := kube.Create(ctx, made); !kerrors.IsAlreadyExists(err) {
				return err
			}
			return nil
		})
		reachable := kc.Data["kubeconfig"]
		away := kubetest.Config(t)
		away.Host = "https://127.0.0.1:1"
		kc.Data["kubeconfig"] = kubetest.Kubeconfig(t, away)
		must(t, kube.Update(ctx, kc))
		must(t, kube.Delete(ctx, fa))
		syncedFalse(t, kube, fa, "Synced False: it cannot revoke the access", "cannot revoke the access")
		time.Sleep(3 * time.Second)
		if err := kube.Get(ctx, client.ObjectKeyFromObject(fa), &v1alpha1.ClusterAccess{}); err != nil {
			t.Fatalf("the access went without revoking: %v", err)
		}
		// The cluster answers again: the access is revoked, and goes.
		kc.Data["kubeconfig"] = reachable
		must(t, kube.Update(ctx, kc))
		until(t, "the access revoked and gone, what the cloud made with it", func() error {
			if err := kube.Get(ctx, client.ObjectKeyFromObject(fa), &v1alpha1.ClusterAccess{}); !kerrors.IsNotFound(err) {
				return fmt.Errorf("the access is still there: %v", err)
			}
			if err := kube.Get(ctx, client.ObjectKey{Namespace: "openstack-cloud-d", Name: "c5c3-control-plane"}, &corev1.ServiceAccount{}); !kerrors.IsNotFound(err) {
				return fmt.Errorf("its ServiceAccount: %v", err)
			}
			if err := kube.Get(ctx, client.ObjectKeyFromObject(made), made); !kerrors.IsNotFound(err) {
				return fmt.Errorf("the ConfigMap it made: %v", err)
			}
			return nil
		})
	})

	t.Run("deleting the access revokes it, and what the cloud made in its namespace goes", func(t *testing.T) {
		// What a control plane keeps there: nova-compute, a key, its
		// configuration ("agents", made above).
		ds, key := novaCompute("openstack-cloud-a"), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "ceph-client", Namespace: "openstack-cloud-a"}, StringData: map[string]string{"key": "k"}}
		must(t, cp.Create(ctx, ds))
		must(t, cp.Create(ctx, key))
		must(t, kube.Delete(ctx, ca))
		until(t, "the ServiceAccount, roles and bindings gone", func() error {
			for _, o := range objects(ca) {
				if err := kube.Get(ctx, client.ObjectKeyFromObject(o), o); !kerrors.IsNotFound(err) {
					return fmt.Errorf("%T %s: %v", o, o.GetName(), err)
				}
			}
			return nil
		})
		until(t, "the token no longer works", func() error {
			if err := cp.Get(ctx, client.ObjectKey{Name: "node-1"}, &corev1.Node{}); !kerrors.IsUnauthorized(err) {
				return fmt.Errorf("got %v, want Unauthorized", err)
			}
			return nil
		})
		for _, o := range []client.Object{ds, key, cm("agents")} {
			if err := kube.Get(ctx, client.ObjectKeyFromObject(o), o); !kerrors.IsNotFound(err) {
				t.Errorf("%T %s, made by the cloud, outlived its access: %v", o, o.GetName(), err)
			}
		}
		if err := kube.Get(ctx, client.ObjectKey{Name: "openstack-cloud-a"}, &corev1.Namespace{}); err != nil {
			t.Errorf("the namespace went with the access: %v", err)
		}
	})
}

// syncedFalse waits until the access says Synced False, its message
// containing want.
func syncedFalse(t *testing.T, kube client.Client, ca *v1alpha1.ClusterAccess, what, want string) {
	t.Helper()
	until(t, what, func() error {
		got := &v1alpha1.ClusterAccess{}
		if err := kube.Get(context.Background(), client.ObjectKeyFromObject(ca), got); err != nil {
			return err
		}
		if c := got.GetCondition(xpv2.TypeSynced); c.Status != corev1.ConditionFalse || !strings.Contains(c.Message, want) {
			return fmt.Errorf("Synced %s: %s", c.Status, c.Message)
		}
		return nil
	})
}

// tokenSecret is a Secret the token controller would fill with a token of
// the access's ServiceAccount that never expires.
func tokenSecret(ns string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "forever", Namespace: ns,
		Annotations: map[string]string{corev1.ServiceAccountNameKey: "c5c3-control-plane"}}, Type: corev1.SecretTypeServiceAccountToken}
}

// hostPath is a volume of the node's path.
func hostPath(name, path string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: path}}}
}

// novaCompute is the DaemonSet a cloud's control plane deploys into its
// namespace of a hypervisor pool (as local/cmd/operator-standin does),
// privileged and mounting what nova-compute and libvirt keep on the node.
func novaCompute(namespace string) *appsv1.DaemonSet {
	labels := map[string]string{"app.kubernetes.io/name": "nova-compute"}
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "nova-compute", Namespace: namespace},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					NodeSelector: map[string]string{"c5c3.io.node-restriction.kubernetes.io/cloud": "cloud-a"},
					HostNetwork:  true,
					HostPID:      true,
					Volumes:      []corev1.Volume{hostPath("nova", "/var/lib/nova"), hostPath("libvirt", "/run/libvirt"), hostPath("modules", "/lib/modules")},
					Containers: []corev1.Container{{Name: "nova-compute", Image: "nova-compute",
						SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)},
						VolumeMounts:    []corev1.VolumeMount{{Name: "nova", MountPath: "/var/lib/nova"}, {Name: "libvirt", MountPath: "/run/libvirt"}, {Name: "modules", MountPath: "/lib/modules"}}}},
				},
			},
		},
	}
}
