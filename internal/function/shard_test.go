package function

import (
	"context"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/response"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/c5c3/consumer-plane/internal/shard"
)

// composing answers with a provider resource without metadata, one with
// labels of its own, and a provider-kubernetes Object.
type composing struct {
	fnv1.UnimplementedFunctionRunnerServiceServer
}

func (composing) RunFunction(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	rsp := response.To(req, response.DefaultTTL)
	rsp.Desired = &fnv1.State{Resources: map[string]*fnv1.Resource{}}
	for name, o := range map[string]map[string]any{
		"project": {"apiVersion": "keystone.provider.c5c3.io/v1alpha1", "kind": "Project"},
		"pc": {"apiVersion": "openstack.provider.c5c3.io/v1alpha1", "kind": "ProviderConfig",
			"metadata": map[string]any{"labels": map[string]any{"c5c3.io/cloud": "team-a-prod"}}},
		"object": {"apiVersion": "kubernetes.crossplane.io/v1alpha2", "kind": "Object"},
	} {
		s, err := structpb.NewStruct(o)
		if err != nil {
			return nil, err
		}
		rsp.Desired.Resources[name] = &fnv1.Resource{Resource: s}
	}
	return rsp, nil
}

func TestShardGuardLabelsTheProvidersResources(t *testing.T) {
	xr, _ := structpb.NewStruct(map[string]any{"apiVersion": "crossplane.c5c3.io/v1alpha1", "kind": "XOpenStackCluster",
		"metadata": map[string]any{"name": "team-a-prod-x7k2p"}})
	rsp, err := shardGuard{composing{}}.RunFunction(context.Background(), &fnv1.RunFunctionRequest{Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: xr}}})
	if err != nil {
		t.Fatal(err)
	}
	want := shard.Of("team-a-prod-x7k2p")
	label := func(name string) string {
		return rsp.GetDesired().GetResources()[name].GetResource().AsMap()["metadata"].(map[string]any)["labels"].(map[string]any)[shard.Label].(string)
	}
	if got := label("project"); got != want {
		t.Errorf("the Project's %s = %q, want %q", shard.Label, got, want)
	}
	if got := label("pc"); got != want {
		t.Errorf("the ProviderConfig's %s = %q, want %q", shard.Label, got, want)
	}
	if l := rsp.GetDesired().GetResources()["pc"].GetResource().AsMap()["metadata"].(map[string]any)["labels"].(map[string]any)["c5c3.io/cloud"]; l != "team-a-prod" {
		t.Errorf("the ProviderConfig's own label is %v, want it kept", l)
	}
	if md, ok := rsp.GetDesired().GetResources()["object"].GetResource().AsMap()["metadata"]; ok {
		t.Errorf("a provider-kubernetes Object got metadata %v, want none added", md)
	}
}
