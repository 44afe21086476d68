package function

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/structpb"
)

// echo answers every request with an empty response.
type echo struct {
	fnv1.UnimplementedFunctionRunnerServiceServer
}

func (echo) RunFunction(context.Context, *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	return &fnv1.RunFunctionResponse{}, nil
}

// landscapeOf is a request requiring n clouds of about 1 KiB each.
func landscapeOf(t *testing.T, n int) *fnv1.RunFunctionRequest {
	t.Helper()
	items := make([]*fnv1.Resource, 0, n)
	for i := range n {
		s, err := structpb.NewStruct(map[string]any{"apiVersion": "crossplane.c5c3.io/v1alpha1", "kind": "XOpenStackCluster",
			"metadata": map[string]any{"name": fmt.Sprintf("cloud-%05d", i)}, "spec": map[string]any{"padding": strings.Repeat("x", 1000)}})
		if err != nil {
			t.Fatal(err)
		}
		items = append(items, &fnv1.Resource{Resource: s})
	}
	return &fnv1.RunFunctionRequest{RequiredResources: map[string]*fnv1.Resources{"clouds": {Items: items}}}
}

// TestSizeGuard: a request from 75% of the receive limit gets a warning on
// the composite that names its size, the limit and its largest part; a
// smaller one none.
func TestSizeGuard(t *testing.T) {
	g := sizeGuard{FunctionRunnerServiceServer: echo{}, limit: 1 << 20, log: logging.NewNopLogger()}

	rsp, err := g.RunFunction(context.Background(), landscapeOf(t, 100))
	if err != nil {
		t.Fatal(err)
	}
	if len(rsp.GetResults()) != 0 {
		t.Errorf("a request of ~0.1 MiB against 1 MiB warns: %v", rsp.GetResults())
	}

	rsp, err = g.RunFunction(context.Background(), landscapeOf(t, 900))
	if err != nil {
		t.Fatal(err)
	}
	if len(rsp.GetResults()) != 1 {
		t.Fatalf("results = %v, want one warning", rsp.GetResults())
	}
	r := rsp.GetResults()[0]
	if r.GetSeverity() != fnv1.Severity_SEVERITY_WARNING || r.GetTarget() != fnv1.Target_TARGET_COMPOSITE {
		t.Errorf("result = %v, want a warning on the composite", r)
	}
	for _, want := range []string{"of the function's receive limit of 1.00 MiB (--max-recv-message-size)", `required resources "clouds" (900 objects)`} {
		if !strings.Contains(r.GetMessage(), want) {
			t.Errorf("warning %q\ndoes not say %q", r.GetMessage(), want)
		}
	}
}
