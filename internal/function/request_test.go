package function

import (
	"fmt"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/google/go-cmp/cmp"

	"github.com/c5c3/consumer-plane/apis/consumer/v1alpha1"
)

func TestObservedComposite(t *testing.T) {
	cases := map[string]struct {
		reason string
		spec   string
		want   string
	}{
		"Valid":         {reason: "A valid spec decodes.", spec: `{"region": "eu-de-1", "workers": 3}`},
		"WrongInteger":  {reason: "A string where an integer belongs names the field.", spec: `{"workers": "twenty"}`, want: "spec.workers is a string; want an integer"},
		"Fraction":      {reason: "A fraction where an integer belongs names the field.", spec: `{"workers": 1.5}`, want: "spec.workers is a number 1.5; want an integer"},
		"InlinedField":  {reason: "Fields of inlined structs are named as users write them.", spec: `{"zones": "eu-de-1a"}`, want: "spec.zones is a string; want a list"},
		"InlinedBool":   {reason: "A string where true or false belongs names the field.", spec: `{"dedicated": "yes"}`, want: "spec.dedicated is a string; want true or false"},
		"WrongObject":   {reason: "A list where an object belongs names the field.", spec: `{"ironcore": []}`, want: "spec.ironcore is an array; want an object"},
		"WrongMapValue": {reason: "A number among string labels names the map.", spec: `{"labels": {"tier": 1}}`, want: "spec.labels is a number; want a string"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req := &fnv1.RunFunctionRequest{Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: resource.MustStructJSON(
				`{"apiVersion": "crossplane.c5c3.io/v1alpha1", "kind": "XHypervisorCluster", "metadata": {"name": "x"}, "spec": ` + tc.spec + `}`)}}}
			err := ObservedComposite(req, &v1alpha1.XHypervisorCluster{})
			got := ""
			if err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nObservedComposite(...): -want error, +got error:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestFromStruct: decoding straight from the request's protobuf Struct gives
// what decoding through a map gives, field-named errors included.
func TestFromStruct(t *testing.T) {
	for name, spec := range map[string]string{
		"Valid":        `{"region": "eu-de-1", "name": "hv-\"quoted\"-\u00e9", "workers": 3, "zones": ["a", "b"], "labels": {"k": "v"}, "dedicated": true, "allowedTenants": null}`,
		"Fraction":     `{"workers": 1.5}`,
		"WrongInteger": `{"workers": "twenty"}`,
		"WrongObject":  `{"ironcore": []}`,
		"Big":          `{"workers": 2147483648}`,
	} {
		t.Run(name, func(t *testing.T) {
			s := resource.MustStructJSON(`{"apiVersion": "crossplane.c5c3.io/v1alpha1", "kind": "XHypervisorCluster", "metadata": {"name": "x", "labels": {"a": "b"}}, "spec": ` + spec + `}`)
			viaStruct, viaMap := &v1alpha1.XHypervisorCluster{}, &v1alpha1.XHypervisorCluster{}
			errStruct := FromStruct(s, "XHypervisorCluster x", viaStruct)
			errMap := FromObject(s.AsMap(), "XHypervisorCluster x", viaMap)
			if fmt.Sprint(errStruct) != fmt.Sprint(errMap) {
				t.Errorf("FromStruct error %v, FromObject error %v", errStruct, errMap)
			}
			if diff := cmp.Diff(viaMap, viaStruct); diff != "" {
				t.Errorf("FromStruct differs from FromObject (-map +struct):\n%s", diff)
			}
		})
	}
}
