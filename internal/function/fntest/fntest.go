// Package fntest builds RunFunctionRequests and the responses the functions
// are expected to answer with, for the functions' table tests.
package fntest

import (
	"encoding/json"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
	"github.com/crossplane/function-sdk-go/response"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/utils/ptr"

	input "github.com/c5c3/consumer-plane/apis/input/v1alpha1"
	"github.com/c5c3/consumer-plane/internal/pool"
)

// Request observes the composite xr and the named composed resources (JSON).
func Request(xr string, observed map[string]string) *fnv1.RunFunctionRequest {
	req := &fnv1.RunFunctionRequest{Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: resource.MustStructJSON(xr)}}}
	if len(observed) > 0 {
		req.Observed.Resources = map[string]*fnv1.Resource{}
		for name, r := range observed {
			req.Observed.Resources[name] = &fnv1.Resource{Resource: resource.MustStructJSON(r)}
		}
	}
	return req
}

// WithInput sets the function's input (JSON) on a request.
func WithInput(req *fnv1.RunFunctionRequest, in string) *fnv1.RunFunctionRequest {
	req.Input = resource.MustStructJSON(in)
	return req
}

// Condition targeting the composite and its claim.
func Condition(typ string, s fnv1.Status, reason, msg string) *fnv1.Condition {
	return &fnv1.Condition{Type: typ, Status: s, Reason: reason, Message: ptr.To(msg), Target: fnv1.Target_TARGET_COMPOSITE_AND_CLAIM.Enum()}
}

// Composed is a desired composed resource (JSON).
func Composed(j string, ready bool) *fnv1.Resource {
	r := &fnv1.Resource{Resource: resource.MustStructJSON(j)}
	if ready {
		r.Ready = fnv1.Ready_READY_TRUE
	}
	return r
}

// Response of a run that set the composite's status (JSON) and composed
// resources.
func Response(status string, resources map[string]*fnv1.Resource, conds ...*fnv1.Condition) *fnv1.RunFunctionResponse {
	return &fnv1.RunFunctionResponse{
		Meta: &fnv1.ResponseMeta{Ttl: durationpb.New(response.DefaultTTL)},
		Desired: &fnv1.State{
			Composite: &fnv1.Resource{Resource: resource.MustStructJSON(`{"status": ` + status + `}`)},
			Resources: resources,
		},
		Conditions: conds,
	}
}

// Fatal is the response of a run that refused its input and composed nothing.
func Fatal(msg string) *fnv1.RunFunctionResponse {
	return &fnv1.RunFunctionResponse{
		Meta:    &fnv1.ResponseMeta{Ttl: durationpb.New(response.DefaultTTL)},
		Results: []*fnv1.Result{{Severity: fnv1.Severity_SEVERITY_FATAL, Message: msg, Target: fnv1.Target_TARGET_COMPOSITE.Enum()}},
	}
}

// Edit returns JSON changed by mutate.
func Edit(j string, mutate func(m map[string]any)) string {
	m := map[string]any{}
	if err := json.Unmarshal([]byte(j), &m); err != nil {
		panic(err)
	}
	mutate(m)
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// EditSpec returns a composite's JSON with its spec changed by mutate.
func EditSpec(j string, mutate func(spec map[string]any)) string {
	return Edit(j, func(m map[string]any) { mutate(m["spec"].(map[string]any)) })
}

// Map descends a path of object keys of decoded JSON.
func Map(m map[string]any, path ...string) map[string]any {
	for _, k := range path {
		m = m[k].(map[string]any)
	}
	return m
}

// WithRequired supplies required resources (JSON) to a request, in the field
// Crossplane 2.x fills (required_resources), or in extra_resources as 1.x
// does when legacy is set.
func WithRequired(req *fnv1.RunFunctionRequest, key string, legacy bool, items ...string) *fnv1.RunFunctionRequest {
	rs := &fnv1.Resources{}
	for _, i := range items {
		rs.Items = append(rs.Items, &fnv1.Resource{Resource: resource.MustStructJSON(i)})
	}
	if legacy {
		if req.ExtraResources == nil { //nolint:staticcheck // Crossplane 1.x
			req.ExtraResources = map[string]*fnv1.Resources{} //nolint:staticcheck // Crossplane 1.x
		}
		req.ExtraResources[key] = rs //nolint:staticcheck // Crossplane 1.x
		return req
	}
	if req.RequiredResources == nil {
		req.RequiredResources = map[string]*fnv1.Resources{}
	}
	req.RequiredResources[key] = rs
	return req
}

// FatalOf is the message of a response's Fatal result, if it has one.
func FatalOf(rsp *fnv1.RunFunctionResponse) string {
	for _, r := range rsp.GetResults() {
		if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
			return r.GetMessage()
		}
	}
	return ""
}

// Fulfil answers requirements as Crossplane's fetcher does, from a cluster
// of objects (JSON): for each selector, the objects of its apiVersion and
// kind (and namespace, if it names one) with its name or all its labels.
// legacy supplies them in extra_resources, as Crossplane 1.x does.
func Fulfil(req *fnv1.RunFunctionRequest, reqs *fnv1.Requirements, legacy bool, objects ...string) *fnv1.RunFunctionRequest {
	parsed := make([]*structpb.Struct, 0, len(objects))
	for _, o := range objects {
		parsed = append(parsed, resource.MustStructJSON(o))
	}
	for key, sel := range reqs.GetResources() {
		var items []string
		for i, o := range parsed {
			if matches(sel, o) {
				items = append(items, objects[i])
			}
		}
		WithRequired(req, key, legacy, items...)
	}
	return req
}

func matches(sel *fnv1.ResourceSelector, o *structpb.Struct) bool {
	f := o.GetFields()
	md := f["metadata"].GetStructValue().GetFields()
	if f["apiVersion"].GetStringValue() != sel.GetApiVersion() || f["kind"].GetStringValue() != sel.GetKind() {
		return false
	}
	if sel.Namespace != nil && md["namespace"].GetStringValue() != sel.GetNamespace() {
		return false
	}
	if n := sel.GetMatchName(); n != "" {
		return md["name"].GetStringValue() == n
	}
	labels := md["labels"].GetStructValue().GetFields()
	for k, v := range sel.GetMatchLabels().GetLabels() {
		if labels[k].GetStringValue() != v {
			return false
		}
	}
	return true
}

// Requiring adds the requirement of a resource by name to an expected
// response, in both the 1.x and 2.x fields.
func Requiring(rsp *fnv1.RunFunctionResponse, key, apiVersion, kind, name string) *fnv1.RunFunctionResponse {
	sel := &fnv1.ResourceSelector{ApiVersion: apiVersion, Kind: kind, Match: &fnv1.ResourceSelector_MatchName{MatchName: name}}
	rsp.Requirements = &fnv1.Requirements{
		ExtraResources: map[string]*fnv1.ResourceSelector{key: sel},
		Resources:      map[string]*fnv1.ResourceSelector{key: sel},
	}
	return rsp
}

// Layer merges into resources what delivers a cluster's layer (a pool's
// node agents, the CRDs of what is composed there) into it under the
// default ShootSettings: what pool.PlaceLayer composes once the cluster can
// be reached, before Flux applied it or (applied) after. internal/pool's
// tests spell it out.
func Layer(resources map[string]*fnv1.Resource, a pool.Access, applied bool) map[string]*fnv1.Resource {
	s := &input.ShootSettings{}
	s.Default()
	if a.SecretNamespace == "" {
		a.SecretNamespace = s.AccessSecretNamespace
	}
	desired := map[resource.Name]*resource.DesiredComposed{}
	var observed map[resource.Name]resource.ObservedComposed
	if applied {
		o := composed.New()
		o.Object["status"] = map[string]any{"lastAppliedRevision": "applied"}
		observed = map[resource.Name]resource.ObservedComposed{pool.ResourceLayer: {Resource: o}}
	}
	if err := pool.PlaceLayer(desired, observed, a, s); err != nil {
		panic(err)
	}
	for name, d := range desired {
		j, err := json.Marshal(d.Resource.Object)
		if err != nil {
			panic(err)
		}
		r := Composed(string(j), d.Ready == resource.ReadyTrue)
		if d.Ready == resource.ReadyFalse {
			r.Ready = fnv1.Ready_READY_FALSE
		}
		resources[string(name)] = r
	}
	return resources
}
