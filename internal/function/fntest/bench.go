package fntest

import (
	"context"
	"os"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/response"
	"sigs.k8s.io/yaml"
)

// Noop is the cheapest function there is: it answers with the request's
// desired state. Its RunFunction is the floor the functions' benchmarks are
// read against.
type Noop struct {
	fnv1.UnimplementedFunctionRunnerServiceServer
}

// RunFunction returns the desired state unchanged.
func (Noop) RunFunction(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	return response.To(req, response.DefaultTTL), nil
}

// Bench runs fn over req b.N times and fails on any error or Fatal result.
func Bench(b *testing.B, fn fnv1.FunctionRunnerServiceServer, req *fnv1.RunFunctionRequest) {
	b.Helper()
	b.ReportAllocs()
	for b.Loop() {
		rsp, err := fn.RunFunction(context.Background(), req)
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range rsp.GetResults() {
			if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
				b.Fatalf("fatal result: %s", r.GetMessage())
			}
		}
	}
}

// CompositeOf reads a claim file and returns it as the composite JSON the
// function would observe, with kind the composite's and the claim's spec.
func CompositeOf(file, kind string) (string, error) {
	b, err := os.ReadFile(file) //nolint:gosec // test data
	if err != nil {
		return "", err
	}
	doc := map[string]any{}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return "", err
	}
	doc["kind"] = kind
	doc["metadata"] = map[string]any{"name": doc["metadata"].(map[string]any)["name"]}
	j, err := yaml.Marshal(doc)
	if err != nil {
		return "", err
	}
	out, err := yaml.YAMLToJSON(j)
	return string(out), err
}
