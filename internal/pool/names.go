package pool

import (
	"cmp"
	"fmt"
	"time"

	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/response"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/c5c3/consumer-plane/internal/function"
)

// Clouds find a pool or control-plane cluster by its name: its claim's name
// (the label Crossplane sets), or the composite's own name when it has no
// claim. Claims of one name may exist in two namespaces, so each cluster
// function requires its namesakes, and the newer of two refuses to compose
// anything: the first keeps serving its clouds.
const (
	RequirementNamesakes         = "namesakes"
	RequirementNamesakeComposite = "namesake-composite"
)

// ReasonNameTaken marks the condition and event of a cluster refused for
// its name.
const ReasonNameTaken = "NameTaken"

// Namesake is a composite's identity as clouds know it, read straight from
// the request's fields (a composite is not converted whole for a name).
type Namesake struct {
	APIVersion, Kind string
	// Composite is the composite's name; Claim its claim's namespace/name,
	// empty when it has none.
	Composite, Claim string
	// Name is what clouds call it (function.ClusterName).
	Name    string
	created time.Time
}

// NamesakeOf reads the identity of a composite.
func NamesakeOf(o *structpb.Struct) Namesake {
	f := o.GetFields()
	md := f["metadata"].GetStructValue().GetFields()
	labels := map[string]string{}
	for _, k := range []string{function.LabelClaimName, function.LabelClaimNamespace} {
		if v := md["labels"].GetStructValue().GetFields()[k].GetStringValue(); v != "" {
			labels[k] = v
		}
	}
	n := Namesake{APIVersion: f["apiVersion"].GetStringValue(), Kind: f["kind"].GetStringValue(), Composite: md["name"].GetStringValue()}
	n.Name = function.ClusterName(labels, n.Composite)
	if c := labels[function.LabelClaimName]; c != "" {
		n.Claim = labels[function.LabelClaimNamespace] + "/" + c
	}
	n.created, _ = time.Parse(time.RFC3339, md["creationTimestamp"].GetStringValue())
	return n
}

func (n Namesake) before(o Namesake) bool {
	return cmp.Or(n.created.Compare(o.created), cmp.Compare(n.Composite, o.Composite)) < 0
}

func (n Namesake) String() string {
	if n.Claim != "" {
		return fmt.Sprintf("claim %s (composite %s)", n.Claim, n.Composite)
	}
	return "composite " + n.Composite
}

// requireNamesakes asks for the composites of the same kind clouds would
// know by the same name.
func requireNamesakes(rsp *fnv1.RunFunctionResponse, self Namesake) {
	function.RequireLabelled(rsp, RequirementNamesakes, self.APIVersion, self.Kind, map[string]string{function.LabelClaimName: self.Name})
	function.Require(rsp, RequirementNamesakeComposite, self.APIVersion, self.Kind, self.Name, "")
}

// refuseNamesake returns an error, and says so on the composite and its
// claim, when an older composite of the kind goes by the same name. Until
// Crossplane supplies the namesakes, nothing is refused: the first call
// composes nothing yet.
func refuseNamesake(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, self Namesake) error {
	for _, key := range []string{RequirementNamesakes, RequirementNamesakeComposite} {
		for _, r := range function.RequiredItems(req, key) {
			o := NamesakeOf(r.GetResource())
			if o.Composite == self.Composite || !o.before(self) {
				continue
			}
			err := errors.Errorf("the name %s is taken by the older %s %s: clouds find a cluster by its name, which must be unique in the landscape; name this one otherwise (its claim, and spec.name for a pool)",
				self.Name, self.Kind, o)
			response.Warning(rsp, err).WithReason(ReasonNameTaken).TargetCompositeAndClaim()
			response.ConditionFalse(rsp, ConditionShootReady, ReasonNameTaken).WithMessage(err.Error()).TargetCompositeAndClaim()
			return err
		}
	}
	return nil
}

// RequireNamed asks for the cluster of a kind that goes by name: by its
// claim's name and by its composite's (see Named).
func RequireNamed(rsp *fnv1.RunFunctionResponse, key, apiVersion, kind, name string) {
	function.RequireLabelled(rsp, key, apiVersion, kind, map[string]string{function.LabelClaimName: name})
	function.Require(rsp, key+"-composite", apiVersion, kind, name, "")
}

// Named is the cluster RequireNamed asked for under key: the oldest that
// goes by name (a newer namesake is refused by its own function). supplied
// is false until Crossplane has supplied what was asked, found is false
// when no such cluster exists.
func Named(req *fnv1.RunFunctionRequest, key, name string) (n Namesake, supplied, found bool) {
	for _, k := range []string{key, key + "-composite"} {
		if !function.Supplied(req, k) {
			return Namesake{}, false, false
		}
		for _, r := range function.RequiredItems(req, k) {
			if o := NamesakeOf(r.GetResource()); o.Name == name && (!found || o.before(n)) {
				n, found = o, true
			}
		}
	}
	return n, true, found
}
