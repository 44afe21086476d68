package function

import (
	"context"
	"strings"
	"testing"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/structpb"
)

// observedSecret is a request observing one provider-kubernetes Object
// that reads a Secret whose reported data is data.
func observedSecret(t *testing.T, data map[string]any) *fnv1.RunFunctionRequest {
	t.Helper()
	s, err := structpb.NewStruct(map[string]any{"apiVersion": "kubernetes.crossplane.io/v1alpha2", "kind": "Object",
		"metadata": map[string]any{"name": "team-a-prod-admin-credential"},
		"status": map[string]any{"atProvider": map[string]any{"manifest": map[string]any{
			"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "admin-clouds"}, "data": data}}}})
	if err != nil {
		t.Fatal(err)
	}
	return &fnv1.RunFunctionRequest{Observed: &fnv1.State{Resources: map[string]*fnv1.Resource{"admin-credential": {Resource: s}}}}
}

// TestSecretGuard: a request whose observed Object reports a Secret's data
// (provider-kubernetes without --sanitize-secrets) gets a fatal result that
// names the Object and the flag, without running the function; redacted
// data, or no Secret, runs it.
func TestSecretGuard(t *testing.T) {
	ran := false
	g := secretGuard{FunctionRunnerServiceServer: runner{ran: func() { ran = true }}, log: logging.NewNopLogger()}

	rsp, err := g.RunFunction(context.Background(), observedSecret(t, map[string]any{"clouds.yaml": "Y2xvdWRzOg=="}))
	if err != nil {
		t.Fatal(err)
	}
	if ran {
		t.Error("the function ran on a request carrying Secret data")
	}
	if len(rsp.GetResults()) != 1 || rsp.GetResults()[0].GetSeverity() != fnv1.Severity_SEVERITY_FATAL {
		t.Fatalf("results %v, want one fatal", rsp.GetResults())
	}
	for _, want := range []string{"--sanitize-secrets", "Object team-a-prod-admin-credential (admin-credential)"} {
		if !strings.Contains(rsp.GetResults()[0].GetMessage(), want) {
			t.Errorf("message %q lacks %q", rsp.GetResults()[0].GetMessage(), want)
		}
	}

	for name, req := range map[string]*fnv1.RunFunctionRequest{
		"redacted":  observedSecret(t, map[string]any{"redacted": nil}),
		"no data":   observedSecret(t, nil),
		"no Object": {},
	} {
		ran = false
		rsp, err := g.RunFunction(context.Background(), req)
		if err != nil || !ran || len(rsp.GetResults()) != 0 {
			t.Errorf("%s: ran %v, results %v, err %v; want the function run", name, ran, rsp.GetResults(), err)
		}
	}
}

// runner is a function that calls ran and answers with desired.
type runner struct {
	fnv1.UnimplementedFunctionRunnerServiceServer

	ran     func()
	desired map[string]*fnv1.Resource
}

func (r runner) RunFunction(context.Context, *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	r.ran()
	return &fnv1.RunFunctionResponse{Desired: &fnv1.State{Resources: r.desired}}, nil
}

// object is a provider-kubernetes Object named name, with spec and status.
func object(t *testing.T, name string, spec, status map[string]any) *structpb.Struct {
	t.Helper()
	o := map[string]any{"apiVersion": "kubernetes.crossplane.io/v1alpha2", "kind": "Object", "metadata": map[string]any{"name": name}, "spec": spec}
	if status != nil {
		o["status"] = status
	}
	s, err := structpb.NewStruct(o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSecretGuardKeepsValuesOutOfObjects: an Object that would write a
// Secret's values into its own spec (data, or a patchesFrom of a Secret,
// which provider-kubernetes patches into the spec and the remote object's
// last-applied annotation) is refused, naming where; one observed with them
// that the function still composes is refused too; one it no longer
// composes (left by an earlier release) only gets a warning, so that it can
// go. Objects without Secret values pass.
func TestSecretGuardKeepsValuesOutOfObjects(t *testing.T) {
	secretManifest := func(extra map[string]any) map[string]any {
		m := map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "ceph-client-st-pool-a", "namespace": "openstack-team-a-prod"}}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	patched := map[string]any{"forProvider": map[string]any{"manifest": secretManifest(nil)},
		"references": []any{map[string]any{"patchesFrom": map[string]any{"apiVersion": "v1", "kind": "Secret", "namespace": "crossplane-system", "name": "team-a-prod-st-pool-a-ceph-client", "fieldPath": "data.key"}, "toFieldPath": "data.key"}}}
	withData := map[string]any{"forProvider": map[string]any{"manifest": secretManifest(map[string]any{"data": map[string]any{"key": "QVFCeA=="}})}}
	applied := map[string]any{"atProvider": map[string]any{"manifest": secretManifest(map[string]any{
		"metadata": map[string]any{"name": "ceph-client-st-pool-a", "annotations": map[string]any{lastApplied: `{"data":{"key":"QVFCeA=="}}`}}})}}
	clean := map[string]any{"forProvider": map[string]any{"manifest": map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "openstack-team-a-prod"}}}}

	cases := map[string]struct {
		observed, desired map[string]*fnv1.Resource
		fatal, warning    string
	}{
		"a desired patchesFrom of a Secret": {
			desired: map[string]*fnv1.Resource{"ceph-key": {Resource: object(t, "team-a-prod-ceph", patched, nil)}},
			fatal:   "Object team-a-prod-ceph (ceph-key) would write a Secret's field copied by spec.references[0].patchesFrom (data.key)",
		},
		"a desired Secret with data": {
			desired: map[string]*fnv1.Resource{"ceph-key": {Resource: object(t, "team-a-prod-ceph", withData, nil)}},
			fatal:   "would write Secret values in spec.forProvider.manifest.data",
		},
		"an observed last-applied annotation, still composed": {
			observed: map[string]*fnv1.Resource{"ceph-key": {Resource: object(t, "team-a-prod-ceph", clean, applied)}},
			desired:  map[string]*fnv1.Resource{"ceph-key": {Resource: object(t, "team-a-prod-ceph", clean, nil)}},
			fatal:    "Object team-a-prod-ceph (ceph-key) holds the applied Secret, values included, in status.atProvider.manifest's " + lastApplied + " annotation",
		},
		"an observed patchesFrom no longer composed": {
			observed: map[string]*fnv1.Resource{"ceph-st-pool-a-client-secret": {Resource: object(t, "team-a-prod-ceph", patched, applied)}},
			desired:  map[string]*fnv1.Resource{"namespace": {Resource: object(t, "team-a-prod-namespace", clean, nil)}},
			warning: "Object team-a-prod-ceph (ceph-st-pool-a-client-secret) holds a Secret's field copied by spec.references[0].patchesFrom (data.key) and the applied Secret, " +
				"values included, in status.atProvider.manifest's " + lastApplied + " annotation; it is no longer composed and is being deleted",
		},
		"no Secret values": {
			observed: map[string]*fnv1.Resource{"namespace": {Resource: object(t, "team-a-prod-namespace", clean, nil)}},
			desired:  map[string]*fnv1.Resource{"namespace": {Resource: object(t, "team-a-prod-namespace", clean, nil)}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := secretGuard{FunctionRunnerServiceServer: runner{ran: func() {}, desired: tc.desired}, log: logging.NewNopLogger()}
			rsp, err := g.RunFunction(context.Background(), &fnv1.RunFunctionRequest{Observed: &fnv1.State{Resources: tc.observed}})
			if err != nil {
				t.Fatal(err)
			}
			var fatal, warning string
			for _, r := range rsp.GetResults() {
				switch r.GetSeverity() {
				case fnv1.Severity_SEVERITY_FATAL:
					fatal = r.GetMessage()
				case fnv1.Severity_SEVERITY_WARNING:
					warning = r.GetMessage()
				}
			}
			if (tc.fatal == "") != (fatal == "") || !strings.Contains(fatal, tc.fatal) {
				t.Errorf("fatal result %q, want one containing %q", fatal, tc.fatal)
			}
			if tc.fatal != "" && len(rsp.GetDesired().GetResources()) > 0 {
				t.Error("a refused response still desires resources")
			}
			if (tc.warning == "") != (warning == "") || !strings.Contains(warning, tc.warning) {
				t.Errorf("warning %q, want one containing %q", warning, tc.warning)
			}
		})
	}
}
