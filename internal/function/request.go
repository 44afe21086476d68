package function

import (
	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/resource/composed"
	"k8s.io/apimachinery/pkg/runtime"
)

// ObservedComposite decodes the observed composite resource into its Go type.
// Fields Crossplane adds to every composite (compositionRef, resourceRefs…)
// are not part of the Go types and are ignored.
func ObservedComposite(req *fnv1.RunFunctionRequest, into any) error {
	oxr, err := request.GetObservedCompositeResource(req)
	if err != nil {
		return errors.Wrap(err, "cannot get observed composite resource")
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(oxr.Resource.UnstructuredContent(), into); err != nil {
		return errors.Wrapf(err, "cannot decode observed %s", oxr.Resource.GetKind())
	}
	return nil
}

// Input decodes the function's input into a Go type. A Composition step
// without input leaves into untouched.
func Input(req *fnv1.RunFunctionRequest, into runtime.Object) error {
	if req.GetInput() == nil {
		return nil
	}
	return errors.Wrap(request.GetInput(req, into), "cannot decode function input")
}

// Composed converts a typed object to a desired composed resource. The status
// is dropped: Crossplane never applies it, and typed zero values (false, "")
// would only add noise to every rendered resource.
func Composed(o runtime.Object) (*composed.Unstructured, error) {
	cd, err := composed.From(o)
	if err != nil {
		return nil, errors.Wrapf(err, "cannot convert %T to a composed resource", o)
	}
	delete(cd.Object, "status")
	return cd, nil
}

// ObservedAs decodes an observed composed resource into its Go type.
func ObservedAs(cd *composed.Unstructured, into any) error {
	return errors.Wrapf(runtime.DefaultUnstructuredConverter.FromUnstructured(cd.UnstructuredContent(), into),
		"cannot decode observed %s %s", cd.GetKind(), cd.GetName())
}
