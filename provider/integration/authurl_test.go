package integration

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	openstackv1alpha1 "github.com/c5c3/consumer-plane/apis/openstack/v1alpha1"
)

// credentialTrap stands where a compromised control plane would point its
// clouds.yaml: it records what is sent to it, and answers nothing useful.
type credentialTrap struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []string
}

func newCredentialTrap(t *testing.T) *credentialTrap {
	t.Helper()
	c := &credentialTrap{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body) //nolint:errcheck // what arrived is what counts
		c.mu.Lock()
		c.bodies = append(c.bodies, r.Method+" "+r.URL.Path+" "+string(b))
		c.mu.Unlock()
		http.Error(w, "not Keystone", http.StatusNotFound)
	}))
	t.Cleanup(c.Close)
	return c
}

func (c *credentialTrap) received() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.bodies...)
}

// TestIntegrationAuthURLIsPinned (#52 §14): a cloud's admin clouds.yaml is
// written by its control plane, in the control-plane cluster; a compromised
// one could point its auth_url elsewhere and collect the admin password.
// A ProviderConfig with spec.authURL (the OpenStackCluster function sets
// the cloud's composed Keystone endpoint there) logs in there only. The
// same clouds.yaml under a ProviderConfig without it sends the password to
// the trap: what the test would see if the pin were lost.
func TestIntegrationAuthURLIsPinned(t *testing.T) {
	h := withOpenStack(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		pinned bool
	}{{"auth-url-unpinned", false}, {"auth-url-pinned", true}} {
		trap := newCredentialTrap(t)
		name := h.name(tc.name)
		rewritten := strings.Replace(cloudsYAML, keystoneURL, trap.URL+"/v3", 1)
		h.create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "crossplane-system"}, StringData: map[string]string{"clouds.yaml": rewritten}})
		t.Cleanup(func() {
			_ = h.kube.Delete(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "crossplane-system"}})
		})
		pc := cloudsYAMLConfig(name, "crossplane-system", name, "")
		if tc.pinned {
			pc.Spec.AuthURL = keystoneURL
		}
		h.create(t, pc)
		t.Cleanup(func() { _ = h.kube.Delete(context.Background(), cloudsYAMLConfig(name, "", "", "")) })
		read := func() (*openstackv1alpha1.ProviderConfig, error) {
			got := &openstackv1alpha1.ProviderConfig{}
			return got, h.kube.Get(ctx, client.ObjectKey{Name: name}, got)
		}
		if !tc.pinned {
			eventually(t, "without spec.authURL the password goes where the clouds.yaml says", func() (bool, string) {
				for _, b := range trap.received() {
					if strings.Contains(b, `"password":"secret"`) {
						return true, b
					}
				}
				return false, strings.Join(trap.received(), "; ")
			})
			continue
		}
		eventually(t, "with spec.authURL the provider reads the catalog from the pinned Keystone", func() (bool, string) {
			got, err := read()
			if err != nil {
				return false, err.Error()
			}
			c := got.GetCondition(openstackv1alpha1.ConditionCatalogRead)
			return c.Status == corev1.ConditionTrue && got.Status.Catalog != nil && len(got.Status.Catalog.Services) > 0, c.Message
		})
		if got := trap.received(); len(got) > 0 {
			t.Errorf("the provider sent %d request(s) to the clouds.yaml's auth_url despite spec.authURL: %v", len(got), got)
		}
	}
}
