package function

import (
	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/resource"
)

// Require asks Crossplane for a resource by name. Crossplane 1.x reads
// requirements.extra_resources and 2.x requirements.resources, so both are
// set. A namespaced resource needs its namespace: 2.x only matches
// namespaced resources for legacy composites when the selector names one.
func Require(rsp *fnv1.RunFunctionResponse, key, apiVersion, kind, name, namespace string) {
	sel := &fnv1.ResourceSelector{ApiVersion: apiVersion, Kind: kind, Match: &fnv1.ResourceSelector_MatchName{MatchName: name}}
	if namespace != "" {
		sel.Namespace = &namespace
	}
	require(rsp, key, sel)
}

// RequireLabelled asks Crossplane for the cluster-scoped resources of a
// kind that carry every one of labels (an empty map matches all of them,
// which a function that must stay cheap in a large landscape avoids).
func RequireLabelled(rsp *fnv1.RunFunctionResponse, key, apiVersion, kind string, labels map[string]string) {
	require(rsp, key, &fnv1.ResourceSelector{ApiVersion: apiVersion, Kind: kind,
		Match: &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: labels}}})
}

// RequiredItems returns the raw resources Crossplane supplied for one
// requirement, from required_resources (2.x) or extra_resources (1.x),
// without converting the other requirements' resources as Required does:
// for a function that requires whole lists, that conversion is most of its
// work.
func RequiredItems(req *fnv1.RunFunctionRequest, key string) []*fnv1.Resource {
	if rs, ok := req.GetRequiredResources()[key]; ok {
		return rs.GetItems()
	}
	return req.GetExtraResources()[key].GetItems() //nolint:staticcheck // Crossplane 1.x supplies these
}

// Supplied reports whether Crossplane answered a requirement (perhaps with
// nothing): before it has, a function cannot tell "none exist" from "not
// asked yet".
func Supplied(req *fnv1.RunFunctionRequest, key string) bool {
	if _, ok := req.GetRequiredResources()[key]; ok {
		return true
	}
	_, ok := req.GetExtraResources()[key] //nolint:staticcheck // Crossplane 1.x supplies these
	return ok
}

func require(rsp *fnv1.RunFunctionResponse, key string, sel *fnv1.ResourceSelector) {
	if rsp.Requirements == nil {
		rsp.Requirements = &fnv1.Requirements{}
	}
	if rsp.Requirements.ExtraResources == nil {
		rsp.Requirements.ExtraResources = map[string]*fnv1.ResourceSelector{}
	}
	if rsp.Requirements.Resources == nil {
		rsp.Requirements.Resources = map[string]*fnv1.ResourceSelector{}
	}
	rsp.Requirements.ExtraResources[key] = sel
	rsp.Requirements.Resources[key] = sel
}

// Required returns the resources Crossplane supplied for a requirement, from
// required_resources (2.x) or extra_resources (1.x).
func Required(req *fnv1.RunFunctionRequest, key string) ([]resource.Required, error) {
	rs, err := request.GetRequiredResources(req)
	if err != nil {
		return nil, errors.Wrap(err, "cannot get required resources")
	}
	if len(rs[key]) > 0 {
		return rs[key], nil
	}
	rs, err = request.GetExtraResources(req) //nolint:staticcheck // Crossplane 1.x supplies these
	if err != nil {
		return nil, errors.Wrap(err, "cannot get extra resources")
	}
	return rs[key], nil
}
