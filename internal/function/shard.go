package function

import (
	"context"
	"strings"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/c5c3/consumer-plane/internal/shard"
)

// shardGuard labels every resource the function composes for the provider
// with the bucket of its composite (internal/shard), so that a provider run
// as several shards (--shards) splits them by composite: a cloud's
// resources and its ProviderConfig land in one replica. Done here, after
// the function ran, so that no function can compose a provider resource
// without it.
type shardGuard struct {
	fnv1.FunctionRunnerServiceServer
}

// RunFunction runs the function and labels its provider resources.
func (g shardGuard) RunFunction(ctx context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	rsp, err := g.FunctionRunnerServiceServer.RunFunction(ctx, req)
	if err != nil || rsp == nil {
		return rsp, err
	}
	name := req.GetObserved().GetComposite().GetResource().GetFields()["metadata"].GetStructValue().GetFields()["name"].GetStringValue()
	if name == "" {
		return rsp, nil
	}
	bucket := structpb.NewStringValue(shard.Of(name))
	for _, r := range rsp.GetDesired().GetResources() {
		o := r.GetResource()
		group, _, _ := strings.Cut(o.GetFields()["apiVersion"].GetStringValue(), "/")
		if !strings.HasSuffix(group, shard.Groups) {
			continue
		}
		meta := o.GetFields()["metadata"].GetStructValue()
		if meta == nil {
			meta = &structpb.Struct{Fields: map[string]*structpb.Value{}}
			o.Fields["metadata"] = structpb.NewStructValue(meta)
		}
		labels := meta.GetFields()["labels"].GetStructValue()
		if labels == nil {
			labels = &structpb.Struct{Fields: map[string]*structpb.Value{}}
			meta.Fields["labels"] = structpb.NewStructValue(labels)
		}
		labels.Fields[shard.Label] = bucket
	}
	return rsp, nil
}
