package fntest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/structpb"
	"sigs.k8s.io/yaml"
)

// FuzzSpec runs a function over arbitrary specs of a composite: it must never
// panic or return a Go error, and when it refuses a spec its Fatal result
// must name the field at fault.
// Seeds are spec JSON documents, for example those of the examples.
func FuzzSpec(f *testing.F, apiVersion, kind string, fn fnv1.FunctionRunnerServiceServer, seeds ...string) {
	FuzzSpecWith(f, apiVersion, kind, fn, nil, seeds...)
}

// FuzzSpecWith is FuzzSpec with a prepare step that completes each request,
// for example with the required resources a function needs before it gets
// to its checks.
func FuzzSpecWith(f *testing.F, apiVersion, kind string, fn fnv1.FunctionRunnerServiceServer, prepare func(*fnv1.RunFunctionRequest), seeds ...string) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, spec []byte) {
		var m map[string]any
		if err := json.Unmarshal(spec, &m); err != nil {
			t.Skip("not a JSON object")
		}
		xr, err := structpb.NewStruct(map[string]any{
			"apiVersion": apiVersion, "kind": kind,
			"metadata": map[string]any{"name": "fuzz"},
			"spec":     m,
		})
		if err != nil {
			t.Skip("not representable as a protobuf Struct")
		}
		req := &fnv1.RunFunctionRequest{Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: xr}}}
		if prepare != nil {
			prepare(req)
		}
		rsp, err := fn.RunFunction(context.Background(), req)
		if err != nil {
			t.Fatalf("RunFunction returned a Go error instead of a result: %v", err)
		}
		for _, r := range rsp.GetResults() {
			if r.GetSeverity() != fnv1.Severity_SEVERITY_FATAL {
				continue
			}
			msg := r.GetMessage()
			if !strings.Contains(msg, "spec.") && !strings.Contains(msg, "input.") && !strings.Contains(msg, "metadata.name") {
				t.Errorf("Fatal result does not name the field at fault: %q\nspec: %s", msg, spec)
			}
		}
	})
}

// Examples is where the example claims are, seen from a function's package.
const Examples = "../../examples"

// FuzzExamples fuzzes a function over specs of a composite kind, seeded with
// a few malformed specs and the spec of every example claim matching glob
// (relative to Examples).
// An optional prepare step completes each request (see FuzzSpecWith).
func FuzzExamples(f *testing.F, glob, kind string, fn fnv1.FunctionRunnerServiceServer, prepare ...func(*fnv1.RunFunctionRequest)) {
	files, err := filepath.Glob(filepath.Join(Examples, glob))
	if err != nil || len(files) == 0 {
		f.Fatalf("no example claims match %s: %v", glob, err)
	}
	seeds := []string{`{}`, `{"workers": -1, "maxWorkers": 0}`, `{"zones": "eu-de-1a"}`, `{"name": 42}`}
	for _, file := range files {
		doc, err := readYAML(file)
		if err != nil {
			f.Fatal(err)
		}
		b, err := json.Marshal(doc["spec"])
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, string(b))
	}
	var p func(*fnv1.RunFunctionRequest)
	if len(prepare) > 0 {
		p = prepare[0]
	}
	FuzzSpecWith(f, "crossplane.c5c3.io/v1alpha1", kind, fn, p, seeds...)
}

func readYAML(file string) (map[string]any, error) {
	b, err := os.ReadFile(file) //nolint:gosec // test data
	if err != nil {
		return nil, err
	}
	doc := map[string]any{}
	return doc, yaml.Unmarshal(b, &doc)
}
