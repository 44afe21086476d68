package fntest

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/response"
	"google.golang.org/protobuf/proto"
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

// BenchSized benchmarks fn over req as sub-benchmark name, beside the no-op
// floor given the same request (name/noop-floor), each reporting the
// request's size as req-bytes/op.
func BenchSized(b *testing.B, name string, fn fnv1.FunctionRunnerServiceServer, req *fnv1.RunFunctionRequest) {
	b.Helper()
	size := float64(proto.Size(req))
	for _, r := range []struct {
		name string
		fn   fnv1.FunctionRunnerServiceServer
	}{{name + "/noop-floor", Noop{}}, {name, fn}} {
		b.Run(r.name, func(b *testing.B) {
			Bench(b, r.fn, req)
			// After the loop: b.Loop's first call drops metrics reported
			// before it.
			b.ReportMetric(size, "req-bytes/op")
		})
	}
}

// BenchExamples benchmarks a function's first reconcile of every example
// claim matching glob (relative to Examples), as a composite of kind, beside
// the no-op floor.
func BenchExamples(b *testing.B, glob, kind string, fn fnv1.FunctionRunnerServiceServer) {
	files, err := filepath.Glob(filepath.Join(Examples, glob))
	if err != nil || len(files) == 0 {
		b.Fatalf("no example claims match %s: %v", glob, err)
	}
	for i, file := range files {
		doc, err := readYAML(file)
		if err != nil {
			b.Fatal(err)
		}
		doc["kind"] = kind
		doc["metadata"] = map[string]any{"name": doc["metadata"].(map[string]any)["name"]}
		xr, err := json.Marshal(doc)
		if err != nil {
			b.Fatal(err)
		}
		req := Request(string(xr), nil)
		if i == 0 {
			b.Run("noop-floor", func(b *testing.B) { Bench(b, Noop{}, req) })
		}
		region := filepath.Base(filepath.Dir(filepath.Dir(file)))
		b.Run(region+"/"+strings.TrimSuffix(filepath.Base(file), ".yaml"), func(b *testing.B) { Bench(b, fn, req) })
	}
}
