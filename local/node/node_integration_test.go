package node

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/c5c3/consumer-plane/test/kubetest"
)

// TestIntegrationAPIServerServesANode starts the real kube-apiserver as
// Prepare configures it and checks what a node and its pods rely on: the
// kubernetes Service points at the node's address, the serving certificate
// is valid for the Service's IP, pods get a ServiceAccount token, and the
// kubelet's kubeconfig logs in as the node.
func TestIntegrationAPIServerServesANode(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		msg := "no KUBEBUILDER_ASSETS (kube-apiserver, etcd): run make tools and export the variables of tools/upstream/build.sh --env"
		if os.Getenv("REQUIRE_INTEGRATION") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	const nodeIP = "10.244.0.1"
	dir := t.TempDir()
	env := &envtest.Environment{}
	files, err := Prepare(env.ControlPlane.GetAPIServer(), filepath.Join(dir, "pki"), nodeIP)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() }) //nolint:errcheck // best effort
	if err := WriteKubeconfigs(env, dir, Components("node-1")); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	// A pod's in-cluster client: the Service's IP as the server name,
	// trusting the CA kube-controller-manager publishes.
	ca, err := os.ReadFile(files.CA)
	if err != nil {
		t.Fatal(err)
	}
	inCluster := rest.CopyConfig(cfg)
	inCluster.CAData, inCluster.ServerName = ca, KubernetesServiceIP
	kube := kubernetes.NewForConfigOrDie(inCluster)
	if _, err := kube.Discovery().ServerVersion(); err != nil {
		t.Fatalf("a client verifying the serving certificate for %s: %v", KubernetesServiceIP, err)
	}
	// The API server's bootstrap controller makes the kubernetes Service
	// and its endpoints shortly after it serves.
	kubetest.Until(t, "the kubernetes Service at "+KubernetesServiceIP+" pointing at "+nodeIP, time.Minute, func() error {
		svc, err := kube.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if svc.Spec.ClusterIP != KubernetesServiceIP {
			return fmt.Errorf("its ClusterIP is %s", svc.Spec.ClusterIP)
		}
		slices, err := kube.DiscoveryV1().EndpointSlices("default").List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=kubernetes"})
		if err != nil {
			return err
		}
		var addrs []string
		for _, s := range slices.Items {
			for _, e := range s.Endpoints {
				addrs = append(addrs, e.Addresses...)
			}
		}
		if len(addrs) != 1 || addrs[0] != nodeIP {
			return fmt.Errorf("its endpoints are %v", addrs)
		}
		return nil
	})

	// ServiceAccount admission mounts the token.
	if _, err := kube.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod, err := kube.CoreV1().Pods("default").Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "example"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pod.Spec.Volumes) == 0 || pod.Spec.Volumes[0].Projected == nil {
		t.Errorf("the pod got no projected ServiceAccount token volume: %+v", pod.Spec.Volumes)
	}

	// The kubelet logs in as its node.
	kc, err := clientcmd.BuildConfigFromFlags("", filepath.Join(dir, "kubelet.kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	review, err := kubernetes.NewForConfigOrDie(kc).AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if u := review.Status.UserInfo; u.Username != "system:node:node-1" || len(u.Groups) == 0 || u.Groups[0] != "system:nodes" {
		t.Errorf("the kubelet logs in as %s %v, want system:node:node-1 in system:nodes", u.Username, u.Groups)
	}
}
