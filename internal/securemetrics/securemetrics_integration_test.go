package securemetrics

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/c5c3/consumer-plane/test/kubetest"
)

func TestMain(m *testing.M) { os.Exit(kubetest.Main(m)) }

// TestIntegrationOnlyAllowedCallersReadMetrics serves metrics as the
// provider and the agents do, against a real kube-apiserver: a caller
// without a token, and one whose ServiceAccount may not get /metrics, are
// refused; one bound to the metrics reader role reads them. Plain HTTP is
// not served at all.
func TestIntegrationOnlyAllowedCallersReadMetrics(t *testing.T) {
	cfg := kubetest.Config(t)
	kube := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()

	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := metricsserver.NewServer((Flags{Address: "127.0.0.1:0"}).Options(), cfg, hc)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	go func() { _ = srv.Start(runCtx) }()
	type bound interface{ GetBindAddr() string }
	var addr string
	kubetest.Until(t, "the metrics server listens", 10*time.Second, func() error {
		if addr = srv.(bound).GetBindAddr(); addr == "" {
			return fmt.Errorf("not bound yet")
		}
		return nil
	})

	token := func(name string) string {
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
		if _, err := kube.CoreV1().ServiceAccounts("default").Create(ctx, sa, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = kube.CoreV1().ServiceAccounts("default").Delete(ctx, name, metav1.DeleteOptions{}) })
		tr, err := kube.CoreV1().ServiceAccounts("default").CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("cannot request a token for %s: %v", name, err)
		}
		return tr.Status.Token
	}
	scraper, nobody := token("metrics-scraper"), token("metrics-nobody")
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "test-metrics-reader"},
		Rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "test-metrics-reader"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "metrics-scraper", Namespace: "default"}}}
	if _, err := kube.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kube.RbacV1().ClusterRoles().Delete(ctx, role.Name, metav1.DeleteOptions{}) })
	if _, err := kube.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kube.RbacV1().ClusterRoleBindings().Delete(ctx, binding.Name, metav1.DeleteOptions{}) })

	// The certificate is self-signed, as kube-controller-manager's is.
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // a self-signed test certificate
	get := func(scheme, bearer string) (int, string) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, scheme+"://"+addr+"/metrics", nil)
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		rsp, err := client.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer rsp.Body.Close()
		body, _ := io.ReadAll(rsp.Body)
		return rsp.StatusCode, string(body)
	}
	for _, c := range []struct {
		who, scheme, token string
		want               int
	}{
		{"no token", "https", "", http.StatusUnauthorized},
		// The TokenReview fails on a token that is not one: controller-runtime
		// answers 500 "Authentication failed", not 401.
		{"a token the API server does not know", "https", "not-a-token", http.StatusInternalServerError},
		{"a ServiceAccount without the metrics reader role", "https", nobody, http.StatusForbidden},
		{"the scraper's ServiceAccount", "https", scraper, http.StatusOK},
		{"plain HTTP, even with the scraper's token", "http", scraper, http.StatusBadRequest},
	} {
		code, body := get(c.scheme, c.token)
		if code != c.want {
			t.Errorf("%s: HTTP %d, want %d: %.200s", c.who, code, c.want, body)
		}
		if got := strings.Contains(body, "# TYPE"); got != (c.want == http.StatusOK) {
			t.Errorf("%s: metrics in the answer: %t: %.200s", c.who, got, body)
		}
	}
}
