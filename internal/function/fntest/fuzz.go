package fntest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/structpb"
)

// FuzzSpec runs a function over arbitrary specs of a composite: it must never
// panic or return a Go error, and when it refuses a spec its Fatal result
// must name the field at fault.
// Seeds are spec JSON documents, for example those of the examples.
func FuzzSpec(f *testing.F, apiVersion, kind string, fn fnv1.FunctionRunnerServiceServer, seeds ...string) {
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

// SpecOf returns the spec of a composite or claim YAML file read as JSON, for
// fuzz seeds.
func SpecOf(doc map[string]any) string {
	b, err := json.Marshal(doc["spec"])
	if err != nil {
		panic(err)
	}
	return string(b)
}
