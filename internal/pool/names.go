package pool

import (
	"cmp"
	"fmt"
	"time"

	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/response"

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

// nameOf is the name clouds know the composite by.
func nameOf(f map[string]any) string {
	md, _ := f["metadata"].(map[string]any)
	labels, _ := md["labels"].(map[string]any)
	if n, _ := labels[function.LabelClaimName].(string); n != "" {
		return n
	}
	n, _ := md["name"].(string)
	return n
}

// requireNamesakes asks for the composites of the same kind clouds would
// know by the same name.
func requireNamesakes(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse) {
	xr := req.GetObserved().GetComposite().GetResource().AsMap()
	apiVersion, _ := xr["apiVersion"].(string)
	kind, _ := xr["kind"].(string)
	name := nameOf(xr)
	function.RequireLabelled(rsp, RequirementNamesakes, apiVersion, kind, map[string]string{function.LabelClaimName: name})
	function.Require(rsp, RequirementNamesakeComposite, apiVersion, kind, name, "")
}

// namesake is a composite's identity, in the order of who came first.
type namesake struct {
	composite, claim string
	created          time.Time
}

func namesakeOf(f map[string]any) namesake {
	md, _ := f["metadata"].(map[string]any)
	labels, _ := md["labels"].(map[string]any)
	n := namesake{}
	n.composite, _ = md["name"].(string)
	ns, _ := labels[function.LabelClaimNamespace].(string)
	if c, _ := labels[function.LabelClaimName].(string); c != "" {
		n.claim = ns + "/" + c
	}
	ts, _ := md["creationTimestamp"].(string)
	n.created, _ = time.Parse(time.RFC3339, ts)
	return n
}

func (n namesake) before(o namesake) bool {
	return cmp.Or(n.created.Compare(o.created), cmp.Compare(n.composite, o.composite)) < 0
}

func (n namesake) String() string {
	if n.claim != "" {
		return fmt.Sprintf("claim %s (composite %s)", n.claim, n.composite)
	}
	return "composite " + n.composite
}

// refuseNamesake returns an error, and says so on the composite and its
// claim, when an older composite of the kind goes by the same name. Until
// Crossplane supplies the namesakes, nothing is refused: the first call
// composes nothing yet.
func refuseNamesake(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse) error {
	xr := req.GetObserved().GetComposite().GetResource().AsMap()
	self := namesakeOf(xr)
	for _, key := range []string{RequirementNamesakes, RequirementNamesakeComposite} {
		for _, r := range function.RequiredItems(req, key) {
			o := namesakeOf(r.GetResource().AsMap())
			if o.composite == self.composite || !o.before(self) {
				continue
			}
			kind, _ := xr["kind"].(string)
			err := errors.Errorf("the name %s is taken by the older %s %s: clouds find a cluster by its name, which must be unique in the landscape; name this one otherwise (its claim, and spec.name for a pool)",
				nameOf(xr), kind, o)
			response.Warning(rsp, err).WithReason(ReasonNameTaken).TargetCompositeAndClaim()
			response.ConditionFalse(rsp, ConditionShootReady, ReasonNameTaken).WithMessage(err.Error()).TargetCompositeAndClaim()
			return err
		}
	}
	return nil
}
