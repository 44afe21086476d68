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

// runner is a function that calls ran and answers with an empty response.
type runner struct {
	fnv1.UnimplementedFunctionRunnerServiceServer

	ran func()
}

func (r runner) RunFunction(context.Context, *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	r.ran()
	return &fnv1.RunFunctionResponse{}, nil
}
