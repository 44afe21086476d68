package xrd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/consumer-plane/test/kubetest"
)

const claimLabelsPolicy = "crossplane/claim-labels-policy.yaml"

// TestOnlyCrossplaneSetsClaimLabelsIntegration: with the shipped
// ValidatingAdmissionPolicy, the real kube-apiserver lets Crossplane core's
// identity (the one in the policy's ConfigMap) set and change a composite's
// crossplane.io/claim-* labels, and refuses them to anyone else, on create
// and update, with a message that says why; other labels stay anyone's.
func TestOnlyCrossplaneSetsClaimLabelsIntegration(t *testing.T) {
	ctx := setup(t)
	applyFile(ctx, t, claimLabelsPolicy)

	// system:masters may do anything RBAC governs; admission policies
	// apply to it all the same.
	as := func(user string) client.Client { return impersonate(t, user, "system:masters") }
	crossplane, mallory := as("system:serviceaccount:crossplane-system:crossplane"), as("mallory")
	claimed := map[string]string{"crossplane.io/claim-name": "hv-pool-a", "crossplane.io/claim-namespace": "infrastructure"}
	composite := func(name string, labels map[string]string) *unstructured.Unstructured {
		u := example(t, hvPool, name)
		u.SetKind("XHypervisorCluster")
		u.SetNamespace("")
		u.SetLabels(labels)
		return u
	}
	const refused = "only Crossplane may set or change the labels crossplane.io/claim-name and crossplane.io/claim-namespace of a XHypervisorCluster"

	// A policy takes effect a moment after it is created.
	n := 0
	kubetest.Until(t, "the policy refuses mallory's claim labels", 30*time.Second, func() error {
		n++
		probe := composite(fmt.Sprintf("probe-%d", n), claimed)
		err := mallory.Create(ctx, probe)
		if err == nil {
			_ = kube.Delete(ctx, probe)
			return errors.New("admitted")
		}
		if !strings.Contains(err.Error(), refused) {
			return fmt.Errorf("refused for another reason: %w", err)
		}
		return nil
	})

	if err := mallory.Create(ctx, composite("hv-mallory-plain", map[string]string{"team": "x"})); err != nil {
		t.Errorf("a composite without claim labels, by anyone: %v", err)
	}
	pool := composite("hv-pool-a-x7k2p", claimed)
	if err := crossplane.Create(ctx, pool); err != nil {
		t.Fatalf("Crossplane creating a claim's composite: %v", err)
	}
	relabel := func(c client.Client, mutate func(map[string]string)) error {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(pool.GroupVersionKind())
		if err := kube.Get(ctx, client.ObjectKeyFromObject(pool), u); err != nil {
			return err
		}
		l := u.GetLabels()
		mutate(l)
		u.SetLabels(l)
		return c.Update(ctx, u)
	}
	if err := relabel(mallory, func(l map[string]string) { l["crossplane.io/claim-namespace"] = "team-x" }); err == nil || !strings.Contains(err.Error(), refused) {
		t.Errorf("mallory moving a composite to another claim namespace: %v, want refused", err)
	}
	if err := relabel(mallory, func(l map[string]string) { delete(l, "crossplane.io/claim-name") }); err == nil || !strings.Contains(err.Error(), refused) {
		t.Errorf("mallory removing a composite's claim name: %v, want refused", err)
	}
	if err := relabel(mallory, func(l map[string]string) { l["owner"] = "ops" }); err != nil {
		t.Errorf("mallory adding another label to a claimed composite: %v", err)
	}
	if err := relabel(crossplane, func(l map[string]string) { l["crossplane.io/claim-name"] = "hv-pool-b" }); err != nil {
		t.Errorf("Crossplane changing a claim label: %v", err)
	}
}

// applyFile creates every object of a YAML file of the examples, and
// deletes them when the test ends: the other tests of the package share
// the API server.
func applyFile(ctx context.Context, t *testing.T, file string) {
	t.Helper()
	b, err := os.ReadFile(examples + "/" + file)
	if err != nil {
		t.Fatal(err)
	}
	d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := d.Decode(&u.Object); errors.Is(err, io.EOF) {
			return
		} else if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if len(u.Object) == 0 {
			continue
		}
		if ns := u.GetNamespace(); ns != "" {
			nsObj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
			if err := kube.Create(ctx, nsObj); err != nil && !strings.Contains(err.Error(), "already exists") {
				t.Fatal(err)
			}
		}
		if err := kube.Create(ctx, u); err != nil {
			t.Fatalf("%s: the real kube-apiserver refuses %s %s: %v", file, u.GetKind(), u.GetName(), err)
		}
		t.Cleanup(func() {
			if err := kube.Delete(context.Background(), u); err != nil {
				t.Errorf("cannot delete %s %s: %v", u.GetKind(), u.GetName(), err)
			}
		})
	}
}

// impersonate is a client of the test's kube-apiserver acting as user, of
// groups.
func impersonate(t *testing.T, user string, groups ...string) client.Client {
	t.Helper()
	cfg := rest.CopyConfig(kubetest.Config(t))
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: groups}
	c, err := client.New(cfg, client.Options{Scheme: kube.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
