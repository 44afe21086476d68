package main

import (
	"context"
	"testing"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/response"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/utils/ptr"
)

const xr = `{
  "apiVersion": "crossplane.c5c3.io/v1alpha1",
  "kind": "XHypervisorCluster",
  "metadata": {"name": "hv-pool-a-x7k2p"},
  "spec": {
    "region": "eu-de-1",
    "name": "hv-pool-a",
    "kubernetesVersion": "1.34",
    "workers": 20,
    "maxWorkers": 100,
    "zones": ["eu-de-1a", "eu-de-1b"],
    "ironcore": {"machinePool": "hv-pool-a", "machineClass": "baremetal-kvm"},
    "labels": {"hardware-gen": "g5"}
  }
}`

// The Shoot the function composes for xr with the default ShootSettings.
const shoot = `{
  "apiVersion": "core.gardener.cloud/v1beta1",
  "kind": "Shoot",
  "metadata": {
    "name": "hv-pool-a",
    "namespace": "garden-c5c3",
    "labels": {"c5c3.io/pool": "hv-pool-a", "c5c3.io/pool-kind": "hypervisor", "hardware-gen": "g5"}
  },
  "spec": {
    "cloudProfile": {"kind": "CloudProfile", "name": "ironcore-metal"},
    "credentialsBindingName": "ironcore-metal",
    "kubernetes": {"version": "1.34"},
    "networking": {"type": "calico", "nodes": "10.250.0.0/16"},
    "provider": {
      "type": "ironcore-metal",
      "workers": [{
        "name": "hypervisor",
        "machine": {"type": "baremetal-kvm", "image": {"name": "gardenlinux"}},
        "minimum": 20,
        "maximum": 100,
        "maxSurge": 1,
        "maxUnavailable": 0,
        "zones": ["eu-de-1a", "eu-de-1b"],
        "labels": {"c5c3.io/pool": "hv-pool-a", "c5c3.io/pool-kind": "hypervisor", "hardware-gen": "g5"},
        "providerConfig": {
          "apiVersion": "ironcore-metal.provider.extensions.gardener.cloud/v1alpha1",
          "kind": "WorkerConfig",
          "extraServerLabels": {"c5c3.io/machine-pool": "hv-pool-a"}
        }
      }]
    },
    "purpose": "production",
    "region": "eu-de-1"
  }
}`

const shootReady = `{
  "apiVersion": "core.gardener.cloud/v1beta1",
  "kind": "Shoot",
  "metadata": {"name": "hv-pool-a", "namespace": "garden-c5c3"},
  "status": {
    "technicalID": "shoot--c5c3--hv-pool-a",
    "lastOperation": {"type": "Create", "state": "Succeeded", "progress": 100, "description": "done", "lastUpdateTime": "2026-11-22T08:00:00Z"},
    "conditions": [
      {"type": "APIServerAvailable", "status": "True", "lastTransitionTime": "2026-11-22T08:00:00Z", "lastUpdateTime": "2026-11-22T08:00:00Z", "reason": "r", "message": "m"},
      {"type": "ControlPlaneHealthy", "status": "True", "lastTransitionTime": "2026-11-22T08:00:00Z", "lastUpdateTime": "2026-11-22T08:00:00Z", "reason": "r", "message": "m"},
      {"type": "EveryNodeReady", "status": "True", "lastTransitionTime": "2026-11-22T08:00:00Z", "lastUpdateTime": "2026-11-22T08:00:00Z", "reason": "r", "message": "m"},
      {"type": "SystemComponentsHealthy", "status": "True", "lastTransitionTime": "2026-11-22T08:00:00Z", "lastUpdateTime": "2026-11-22T08:00:00Z", "reason": "r", "message": "m"}
    ]
  }
}`

const shootFailed = `{
  "apiVersion": "core.gardener.cloud/v1beta1",
  "kind": "Shoot",
  "metadata": {"name": "hv-pool-a", "namespace": "garden-c5c3"},
  "status": {
    "technicalID": "shoot--c5c3--hv-pool-a",
    "lastOperation": {"type": "Create", "state": "Failed", "progress": 40, "description": "infrastructure failed", "lastUpdateTime": "2026-11-22T08:00:00Z"},
    "lastErrors": [{"description": "no server matches the machine pool labels"}]
  }
}`

func TestRunFunction(t *testing.T) {
	type args struct {
		req *fnv1.RunFunctionRequest
	}
	type want struct {
		rsp *fnv1.RunFunctionResponse
	}

	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"NewPool": {
			reason: "A new pool composes its Shoot with the default settings and is Provisioning.",
			args: args{req: &fnv1.RunFunctionRequest{
				Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: resource.MustStructJSON(xr)}},
			}},
			want: want{rsp: &fnv1.RunFunctionResponse{
				Meta: &fnv1.ResponseMeta{Ttl: durationpb.New(response.DefaultTTL)},
				Desired: &fnv1.State{
					Composite: &fnv1.Resource{Resource: resource.MustStructJSON(`{"status": {"phase": "Provisioning"}}`)},
					Resources: map[string]*fnv1.Resource{"shoot": {Resource: resource.MustStructJSON(shoot)}},
				},
				Conditions: []*fnv1.Condition{{
					Type: "ShootReady", Status: fnv1.Status_STATUS_CONDITION_FALSE, Reason: "Creating",
					Message: ptr.To("the Shoot is being created"), Target: fnv1.Target_TARGET_COMPOSITE_AND_CLAIM.Enum(),
				}},
			}},
		},
		"ShootReady": {
			reason: "A Shoot that Gardener reports healthy makes the Shoot and the pool Ready.",
			args: args{req: &fnv1.RunFunctionRequest{
				Observed: &fnv1.State{
					Composite: &fnv1.Resource{Resource: resource.MustStructJSON(xr)},
					Resources: map[string]*fnv1.Resource{"shoot": {Resource: resource.MustStructJSON(shootReady)}},
				},
			}},
			want: want{rsp: &fnv1.RunFunctionResponse{
				Meta: &fnv1.ResponseMeta{Ttl: durationpb.New(response.DefaultTTL)},
				Desired: &fnv1.State{
					Composite: &fnv1.Resource{Resource: resource.MustStructJSON(`{"status": {"phase": "Ready", "clusterName": "shoot--c5c3--hv-pool-a"}}`)},
					Resources: map[string]*fnv1.Resource{"shoot": {Resource: resource.MustStructJSON(shoot), Ready: fnv1.Ready_READY_TRUE}},
				},
				Conditions: []*fnv1.Condition{{
					Type: "ShootReady", Status: fnv1.Status_STATUS_CONDITION_TRUE, Reason: "Available",
					Message: ptr.To("Shoot is ready"), Target: fnv1.Target_TARGET_COMPOSITE_AND_CLAIM.Enum(),
				}},
			}},
		},
		"ShootFailed": {
			reason: "A Shoot whose last operation failed makes the pool Failed, saying why.",
			args: args{req: &fnv1.RunFunctionRequest{
				Observed: &fnv1.State{
					Composite: &fnv1.Resource{Resource: resource.MustStructJSON(xr)},
					Resources: map[string]*fnv1.Resource{"shoot": {Resource: resource.MustStructJSON(shootFailed)}},
				},
			}},
			want: want{rsp: &fnv1.RunFunctionResponse{
				Meta: &fnv1.ResponseMeta{Ttl: durationpb.New(response.DefaultTTL)},
				Desired: &fnv1.State{
					Composite: &fnv1.Resource{Resource: resource.MustStructJSON(`{"status": {"phase": "Failed", "clusterName": "shoot--c5c3--hv-pool-a"}}`)},
					Resources: map[string]*fnv1.Resource{"shoot": {Resource: resource.MustStructJSON(shoot)}},
				},
				Conditions: []*fnv1.Condition{{
					Type: "ShootReady", Status: fnv1.Status_STATUS_CONDITION_FALSE, Reason: "Failed",
					Message: ptr.To("Shoot create failed: infrastructure failed; no server matches the machine pool labels"),
					Target:  fnv1.Target_TARGET_COMPOSITE_AND_CLAIM.Enum(),
				}},
			}},
		},
		"KeepsEarlierSteps": {
			reason: "Resources that earlier pipeline steps desire are kept.",
			args: args{req: &fnv1.RunFunctionRequest{
				Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: resource.MustStructJSON(xr)}},
				Desired: &fnv1.State{Resources: map[string]*fnv1.Resource{
					"earlier": {Resource: resource.MustStructJSON(`{"apiVersion": "v1", "kind": "ConfigMap"}`)},
				}},
			}},
			want: want{rsp: &fnv1.RunFunctionResponse{
				Meta: &fnv1.ResponseMeta{Ttl: durationpb.New(response.DefaultTTL)},
				Desired: &fnv1.State{
					Composite: &fnv1.Resource{Resource: resource.MustStructJSON(`{"status": {"phase": "Provisioning"}}`)},
					Resources: map[string]*fnv1.Resource{
						"earlier": {Resource: resource.MustStructJSON(`{"apiVersion": "v1", "kind": "ConfigMap"}`)},
						"shoot":   {Resource: resource.MustStructJSON(shoot)},
					},
				},
				Conditions: []*fnv1.Condition{{
					Type: "ShootReady", Status: fnv1.Status_STATUS_CONDITION_FALSE, Reason: "Creating",
					Message: ptr.To("the Shoot is being created"), Target: fnv1.Target_TARGET_COMPOSITE_AND_CLAIM.Enum(),
				}},
			}},
		},
		"WorkersExceedMaxWorkers": {
			reason: "A pool asking for more workers than it may grow to is refused, naming both fields, and composes nothing.",
			args: args{req: &fnv1.RunFunctionRequest{
				Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: resource.MustStructJSON(`{
					"apiVersion": "crossplane.c5c3.io/v1alpha1", "kind": "XHypervisorCluster", "metadata": {"name": "x"},
					"spec": {"region": "eu-de-1", "name": "hv-pool-a", "workers": 120, "maxWorkers": 100,
					         "zones": ["eu-de-1a"], "ironcore": {"machinePool": "hv-pool-a"}}}`)}},
			}},
			want: want{rsp: &fnv1.RunFunctionResponse{
				Meta: &fnv1.ResponseMeta{Ttl: durationpb.New(response.DefaultTTL)},
				Results: []*fnv1.Result{{
					Severity: fnv1.Severity_SEVERITY_FATAL,
					Message:  "spec.workers (120) must not exceed spec.maxWorkers (100)",
					Target:   fnv1.Target_TARGET_COMPOSITE.Enum(),
				}},
			}},
		},
		"InvalidInput": {
			reason: "Invalid ShootSettings in the Composition are refused, naming the input field and what is valid.",
			args: args{req: &fnv1.RunFunctionRequest{
				Input:    resource.MustStructJSON(`{"apiVersion": "input.crossplane.c5c3.io/v1alpha1", "kind": "ShootSettings", "purpose": "fun"}`),
				Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: resource.MustStructJSON(xr)}},
			}},
			want: want{rsp: &fnv1.RunFunctionResponse{
				Meta: &fnv1.ResponseMeta{Ttl: durationpb.New(response.DefaultTTL)},
				Results: []*fnv1.Result{{
					Severity: fnv1.Severity_SEVERITY_FATAL,
					Message:  `invalid ShootSettings in the Composition: input.purpose "fun" is invalid: want one of evaluation, testing, development, production`,
					Target:   fnv1.Target_TARGET_COMPOSITE.Enum(),
				}},
			}},
		},
		"InputOverridesDefaults": {
			reason: "ShootSettings from the Composition replace the defaults they set.",
			args: args{req: &fnv1.RunFunctionRequest{
				Input: resource.MustStructJSON(`{"apiVersion": "input.crossplane.c5c3.io/v1alpha1", "kind": "ShootSettings",
				  "projectNamespace": "garden-lab", "purpose": "development", "machineImage": {"name": "gardenlinux", "version": "1877.3"}}`),
				Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: resource.MustStructJSON(xr)}},
			}},
			want: want{rsp: func() *fnv1.RunFunctionResponse {
				s := resource.MustStructJSON(shoot)
				md := s.Fields["metadata"].GetStructValue()
				md.Fields["namespace"] = structString("garden-lab")
				spec := s.Fields["spec"].GetStructValue()
				spec.Fields["purpose"] = structString("development")
				w := spec.Fields["provider"].GetStructValue().Fields["workers"].GetListValue().Values[0].GetStructValue()
				w.Fields["machine"].GetStructValue().Fields["image"].GetStructValue().Fields["version"] = structString("1877.3")
				return &fnv1.RunFunctionResponse{
					Meta: &fnv1.ResponseMeta{Ttl: durationpb.New(response.DefaultTTL)},
					Desired: &fnv1.State{
						Composite: &fnv1.Resource{Resource: resource.MustStructJSON(`{"status": {"phase": "Provisioning"}}`)},
						Resources: map[string]*fnv1.Resource{"shoot": {Resource: s}},
					},
					Conditions: []*fnv1.Condition{{
						Type: "ShootReady", Status: fnv1.Status_STATUS_CONDITION_FALSE, Reason: "Creating",
						Message: ptr.To("the Shoot is being created"), Target: fnv1.Target_TARGET_COMPOSITE_AND_CLAIM.Enum(),
					}},
				}
			}()},
		},
	}

	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := &Function{log: logging.NewNopLogger()}
			rsp, err := f.RunFunction(context.Background(), tc.args.req)
			if err != nil {
				t.Fatalf("%s\nf.RunFunction(...): unexpected error: %v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.want.rsp, rsp, protocmp.Transform()); diff != "" {
				t.Errorf("%s\nf.RunFunction(...): -want rsp, +got rsp:\n%s", tc.reason, diff)
			}
		})
	}
}

func structString(s string) *structpb.Value { return structpb.NewStringValue(s) }
