package function

import (
	"context"
	"testing"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/response"
	"google.golang.org/protobuf/types/known/structpb"
)

// ttlFunction answers as the CobaltCore functions do: the default TTL, and
// the composite not ready when notReady.
type ttlFunction struct {
	fnv1.UnimplementedFunctionRunnerServiceServer

	notReady bool
}

func (f ttlFunction) RunFunction(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	rsp := response.To(req, response.DefaultTTL)
	if f.notReady {
		rsp.Desired.Composite.Ready = fnv1.Ready_READY_FALSE
	}
	return rsp, nil
}

// composite is an observed XR created at created, with a Ready condition of
// status ready (none if empty) and a PoolsReady condition that last changed
// at changed.
func composite(t *testing.T, created, changed time.Time, ready string) *fnv1.RunFunctionRequest {
	t.Helper()
	conds := []any{map[string]any{"type": "PoolsReady", "status": "True", "lastTransitionTime": changed.Format(time.RFC3339)}}
	if ready != "" {
		conds = append(conds, map[string]any{"type": "Ready", "status": ready, "lastTransitionTime": created.Format(time.RFC3339)})
	}
	xr, err := structpb.NewStruct(map[string]any{
		"apiVersion": "crossplane.c5c3.io/v1alpha1", "kind": "XOpenStackCluster",
		"metadata": map[string]any{"name": "team-a-prod-x7k2p", "creationTimestamp": created.Format(time.RFC3339)},
		"status":   map[string]any{"conditions": conds},
	})
	if err != nil {
		t.Fatal(err)
	}
	return &fnv1.RunFunctionRequest{Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: xr}}, Desired: &fnv1.State{Composite: &fnv1.Resource{}}}
}

// TestPaceGuard: a composite not ready is looked at again soon after its
// state last changed, less often the longer nothing changed, and at the
// function's own TTL once ready.
func TestPaceGuard(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	cases := map[string]struct {
		reason   string
		req      *fnv1.RunFunctionRequest
		notReady bool
		want     time.Duration
	}{
		"NewComposite": {
			reason: "a composite created a moment ago, with no Ready condition yet, is looked at within seconds",
			req:    composite(t, now.Add(-time.Second), now.Add(-time.Second), ""),
			want:   2 * time.Second,
		},
		"StageJustChanged": {
			reason: "a composite an hour old whose stage changed 20 s ago waits a quarter of that",
			req:    composite(t, now.Add(-time.Hour), now.Add(-20*time.Second), "False"),
			want:   5 * time.Second,
		},
		"WaitingLong": {
			reason: "a composite waiting with nothing changed for ten minutes is looked at once a minute, as a ready one",
			req:    composite(t, now.Add(-time.Hour), now.Add(-10*time.Minute), "False"),
			want:   time.Minute,
		},
		"Ready": {
			reason: "a ready composite keeps the function's TTL",
			req:    composite(t, now.Add(-time.Hour), now.Add(-time.Second), "True"),
			want:   time.Minute,
		},
		"ReadyButFunctionSaysNot": {
			reason:   "a composite Crossplane observed Ready whose function holds it not ready (a stage added) is paced",
			req:      composite(t, now.Add(-time.Hour), now.Add(-8*time.Second), "True"),
			notReady: true,
			want:     2 * time.Second,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := paceGuard{FunctionRunnerServiceServer: ttlFunction{notReady: tc.notReady}, now: func() time.Time { return now }}
			rsp, err := g.RunFunction(context.Background(), tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if got := rsp.GetMeta().GetTtl().AsDuration(); got != tc.want {
				t.Errorf("%s\nTTL: want %v, got %v", tc.reason, tc.want, got)
			}
		})
	}
}
