//go:build e2e

package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// noSecretOutsideItsSecrets (6c): every CephX key, application credential
// secret, password and kubeconfig credential the landscape published is
// searched for, as it is and in base64, in every other object of the
// management cluster: managed resources, Objects, composites, claims,
// events (#40: patchesFrom once left CephX keys and the arbiter's
// kubeconfig in Objects). The sweep is shown to find a key put into a
// ConfigMap: it runs once with that ConfigMap there, and finds that and
// nothing else.
func noSecretOutsideItsSecrets(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	secrets, err := plane.kube.CoreV1().Secrets("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("cannot list the Secrets: %v", err)
	}
	wanted := map[string]string{} // value: where it comes from
	planted := ""
	for _, s := range secrets.Items {
		for _, sv := range secretValues(s) {
			key, v := sv.key, sv.value
			where := fmt.Sprintf("%s of Secret %s/%s", key, s.Namespace, s.Name)
			if _, seen := wanted[v]; !seen {
				wanted[v] = where
			}
			if b := base64.StdEncoding.EncodeToString([]byte(v)); wanted[b] == "" {
				wanted[b] = where + " (base64)"
			}
			if planted == "" && key == "key" {
				planted = v
			}
		}
	}
	if planted == "" {
		t.Fatalf("no CephX key among the management cluster's %d Secrets to sweep for", len(secrets.Items))
	}
	cms := plane.kube.CoreV1().ConfigMaps("team-a")
	if _, err := cms.Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-planted-key"},
		Data:       map[string]string{"copied": planted},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("cannot plant a key: %v", err)
	}
	defer func() { _ = cms.Delete(context.WithoutCancel(ctx), "e2e-planted-key", metav1.DeleteOptions{}) }()
	hits, searched := sweep(t, wanted)
	t.Logf("searched %d objects for %d values of %d Secrets", searched, len(wanted), len(secrets.Items))
	var plantedHits, others []string
	for _, h := range hits {
		if strings.HasPrefix(h, "ConfigMap team-a/e2e-planted-key holds ") {
			plantedHits = append(plantedHits, h)
		} else {
			others = append(others, h)
		}
	}
	t.Run("the sweep finds a CephX key put into a ConfigMap", func(t *testing.T) {
		if !slices.ContainsFunc(plantedHits, func(h string) bool { return strings.Contains(h, "holds the key of Secret") }) {
			t.Errorf("the sweep does not find the planted key: %v", plantedHits)
		}
	})
	t.Run("no published secret value outside its Secrets", func(t *testing.T) {
		for _, h := range others {
			t.Error(h)
		}
	})
}

// secretValue is a value published in a Secret, and the key (and field)
// it is under.
type secretValue struct{ key, value string }

// secretValues are the values this landscape publishes in one Secret, by
// the key (and field) they come from: CephX keys (key "key"), application
// credential secrets and passwords of a clouds.yaml, tokens and client keys
// of a kubeconfig. Shorter values would match by chance.
func secretValues(s corev1.Secret) []secretValue {
	var out []secretValue
	add := func(key, v string) {
		if len(v) >= 16 {
			out = append(out, secretValue{key: key, value: v})
		}
	}
	for key, b := range s.Data {
		text := string(b)
		switch {
		case key == "key" && strings.HasPrefix(text, "AQ"):
			add(key, text)
		case strings.HasSuffix(key, "clouds.yaml"):
			var doc struct {
				Clouds map[string]struct {
					Auth map[string]any `json:"auth"`
				} `json:"clouds"`
			}
			if yaml.Unmarshal(b, &doc) != nil {
				continue
			}
			for _, c := range doc.Clouds {
				for _, f := range []string{"application_credential_secret", "password"} {
					if v, ok := c.Auth[f].(string); ok {
						add(key+" "+f, v)
					}
				}
			}
		case key == "kubeconfig":
			var doc struct {
				Users []struct {
					User struct {
						Token         string `json:"token"`
						ClientKeyData string `json:"client-key-data"`
					} `json:"user"`
				} `json:"users"`
			}
			if yaml.Unmarshal(b, &doc) != nil {
				continue
			}
			for _, u := range doc.Users {
				add(key+" token", u.User.Token)
				add(key+" client-key-data", u.User.ClientKeyData)
			}
		}
	}
	return out
}

// sweep lists every object of every listable kind but Secrets and returns,
// for each wanted value found in one, "KIND NAMESPACE/NAME holds the WHERE".
// A kind no longer served when it is listed (a CRD going away) is skipped.
func sweep(t *testing.T, wanted map[string]string) (hits []string, searched int) {
	t.Helper()
	lists, err := plane.kube.Discovery().ServerPreferredResources()
	if err != nil && len(lists) == 0 {
		t.Fatalf("cannot discover the API: %v", err)
	}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") || (gv.Group == "" && r.Name == "secrets") {
				continue
			}
			items, err := plane.dyn.Resource(gv.WithResource(r.Name)).List(t.Context(), metav1.ListOptions{})
			if apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) {
				continue
			}
			if err != nil {
				t.Fatalf("cannot list %s: %v", r.Name, err)
			}
			for _, o := range items.Items {
				searched++
				b, err := json.Marshal(o.Object)
				if err != nil {
					t.Fatal(err)
				}
				text := string(b)
				for v, where := range wanted {
					if strings.Contains(text, v) {
						name := o.GetName()
						if o.GetNamespace() != "" {
							name = o.GetNamespace() + "/" + name
						}
						hits = append(hits, fmt.Sprintf("%s %s holds the %s", o.GetKind(), name, where))
					}
				}
			}
		}
	}
	return hits, searched
}
