package function

import (
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
