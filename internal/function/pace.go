package function

import (
	"context"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/c5c3/consumer-plane/internal/pace"
)

// paceGuard sets how soon Crossplane calls the function again for a
// composite (the response's TTL, after which core v2.x requeues it): while
// the composite is not ready, soon after its state last changed and less
// often the longer nothing changes (internal/pace); once it is ready, the
// function's own TTL. Core wakes a composite at once when a resource it
// composes or a function required changes, but not when what those resources
// wait on changes outside the management cluster (a Shoot in the garden, a
// kubeconfig Gardener issues, an agent's report in a pool cluster, a cloud's
// catalog), and a cloud passes several such stages in a row: with one TTL of
// a minute each stage waited up to a minute.
type paceGuard struct {
	fnv1.FunctionRunnerServiceServer

	now func() time.Time
}

// RunFunction runs the function and paces the composite's next look.
func (g paceGuard) RunFunction(ctx context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	rsp, err := g.FunctionRunnerServiceServer.RunFunction(ctx, req)
	if err != nil || rsp == nil {
		return rsp, err
	}
	steady := rsp.GetMeta().GetTtl().AsDuration()
	if steady <= 0 || ready(req, rsp) {
		return rsp, nil
	}
	xr := req.GetObserved().GetComposite().GetResource()
	since := g.now().Sub(lastChange(xr))
	if rsp.Meta == nil {
		rsp.Meta = &fnv1.ResponseMeta{}
	}
	rsp.Meta.Ttl = durationpb.New(pace.Next(since, steady))
	return rsp, nil
}

// ready reports whether the composite is ready and stays so: Crossplane
// observed it Ready and the function does not say otherwise.
func ready(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse) bool {
	if rsp.GetDesired().GetComposite().GetReady() == fnv1.Ready_READY_FALSE {
		return false
	}
	for _, c := range conditions(req.GetObserved().GetComposite().GetResource()) {
		f := c.GetFields()
		if f["type"].GetStringValue() == "Ready" {
			return f["status"].GetStringValue() == "True"
		}
	}
	return false
}

// lastChange is when the composite's state last changed: the latest of its
// creation and its conditions' transitions.
func lastChange(xr *structpb.Struct) time.Time {
	created, _ := time.Parse(time.RFC3339, xr.GetFields()["metadata"].GetStructValue().GetFields()["creationTimestamp"].GetStringValue())
	var transitions []time.Time
	for _, c := range conditions(xr) {
		if t, err := time.Parse(time.RFC3339, c.GetFields()["lastTransitionTime"].GetStringValue()); err == nil {
			transitions = append(transitions, t)
		}
	}
	return pace.LastChange(created, transitions...)
}

func conditions(xr *structpb.Struct) []*structpb.Struct {
	var out []*structpb.Struct
	for _, v := range xr.GetFields()["status"].GetStructValue().GetFields()["conditions"].GetListValue().GetValues() {
		if c := v.GetStructValue(); c != nil {
			out = append(out, c)
		}
	}
	return out
}
