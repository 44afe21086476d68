package render

import (
	"maps"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestResolve(t *testing.T) {
	cat, err := LoadCatalog(filepath.Join("testdata", "catalog"))
	if err != nil {
		t.Fatal(err)
	}
	xrdFile := filepath.Join("testdata", "catalog", "xrd.yaml")
	production := filepath.Join("testdata", "catalog", "production.yaml")
	staging := filepath.Join("testdata", "catalog", "staging.yaml")
	type want struct {
		xrd, composition string
		err              bool
	}
	cases := map[string]struct {
		reason string
		spec   map[string]any
		kind   string
		want   want
	}{
		"Default": {
			reason: "Without a ref or selector the XRD's default Composition is used.",
			kind:   "Cloud", spec: map[string]any{},
			want: want{xrd: xrdFile, composition: production},
		},
		"Selector": {
			reason: "A compositionSelector picks the Composition whose labels match.",
			kind:   "Cloud", spec: map[string]any{"compositionSelector": map[string]any{"matchLabels": map[string]any{"stage": "staging"}}},
			want: want{xrd: xrdFile, composition: staging},
		},
		"SelectorMatchesNothing": {
			reason: "A selector that matches no Composition is an error, as Crossplane would never compose it.",
			kind:   "Cloud", spec: map[string]any{"compositionSelector": map[string]any{"matchLabels": map[string]any{"stage": "lab"}}},
			want: want{err: true},
		},
		"RefToMissing": {
			reason: "A compositionRef to a missing Composition is an error.",
			kind:   "Cloud", spec: map[string]any{"compositionRef": map[string]any{"name": "nope"}},
			want: want{err: true},
		},
		"CompositeKind": {
			reason: "Composites resolve like their claims.",
			kind:   "XCloud", spec: map[string]any{},
			want: want{xrd: xrdFile, composition: production},
		},
		"UnknownKind": {
			reason: "A kind no XRD defines is an error.",
			kind:   "Volume", spec: map[string]any{},
			want: want{err: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.org/v1alpha1", "kind": tc.kind, "spec": tc.spec}}
			r, err := cat.Resolve(u)
			xrd, comp := r.XRD, r.Composition
			if (err != nil) != tc.want.err {
				t.Fatalf("%s\nResolve(...): error %v, want error: %t", tc.reason, err, tc.want.err)
			}
			if diff := cmp.Diff(tc.want, want{xrd: xrd, composition: comp, err: err != nil}, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nResolve(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}

	if diff := cmp.Diff([]string{"function-a", "function-b"}, cat.FunctionNames()); diff != "" {
		t.Errorf("FunctionNames(): -want, +got:\n%s", diff)
	}
}

func TestSortResults(t *testing.T) {
	in := "---\nkind: XPool\n---\napiVersion: render.crossplane.io/v1beta1\nkind: Result\nmessage: b\n---\nkind: Shoot\n---\napiVersion: render.crossplane.io/v1beta1\nkind: Result\nmessage: a\n"
	want := "---\nkind: XPool\n---\nkind: Shoot\n---\napiVersion: render.crossplane.io/v1beta1\nkind: Result\nmessage: a\n---\napiVersion: render.crossplane.io/v1beta1\nkind: Result\nmessage: b\n"
	if diff := cmp.Diff(want, string(sortResults([]byte(in)))); diff != "" {
		t.Errorf("sortResults(...): -want, +got:\n%s", diff)
	}
}

// TestCompositionsCallInstalledFunctions: core names a Function it installs
// as a dependency of the Configuration after its repository
// (xpkg.c5c3.io/cobaltcore/function-x is cobaltcore-function-x); a
// Composition whose functionRef names anything else finds no Function once
// a platform engineer installs the Configuration alone.
func TestCompositionsCallInstalledFunctions(t *testing.T) {
	installed, err := dependencyNames(filepath.Join(root, "crossplane.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if got := installed["function-openstack-cluster"]; got != "cobaltcore-function-openstack-cluster" {
		t.Errorf("function-openstack-cluster is installed as %q, want cobaltcore-function-openstack-cluster", got)
	}
	cat, err := LoadCatalog(filepath.Join(root, "package"))
	if err != nil {
		t.Fatal(err)
	}
	names := slices.Collect(maps.Values(installed))
	for _, fn := range cat.FunctionNames() {
		if !slices.Contains(names, fn) {
			t.Errorf("a Composition calls function %q; the Configuration's dependencies install %v", fn, names)
		}
	}
	if got := dnsLabel("xpkg.crossplane.io/crossplane-contrib/provider-kubernetes"); got != "xpkg-crossplane-io-crossplane-contrib-provider-kubernetes" {
		t.Errorf("dnsLabel = %q", got)
	}
}
