package function

import (
	"encoding/json"
	stderrors "errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"unicode"

	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
	"github.com/crossplane/function-sdk-go/response"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/runtime"
)

// ObservedComposite decodes the observed composite resource into its Go type.
// Fields Crossplane adds to every composite (compositionRef, resourceRefs…)
// are not part of the Go types and are ignored. A field of the wrong type is
// reported by its path (spec.workers), which the API server would have
// refused already; a render or an XRD out of step with the function is not.
func ObservedComposite(req *fnv1.RunFunctionRequest, into any) error {
	oxr, err := request.GetObservedCompositeResource(req)
	if err != nil {
		return errors.Wrap(err, "cannot get observed composite resource")
	}
	return FromObject(oxr.Resource.UnstructuredContent(), oxr.Resource.GetKind(), into)
}

// FromObject decodes an unstructured object (observed, required) of the
// named kind into its Go type. A field of the wrong type is reported by its
// path; any other failure names the kind.
func FromObject(obj map[string]any, kind string, into any) error {
	b, err := json.Marshal(obj)
	if err != nil {
		return errors.Wrapf(err, "cannot encode %s", kind)
	}
	return fromJSON(b, kind, into)
}

// FromStruct decodes an object as the request carries it (a protobuf
// Struct) into its Go type, like FromObject but without building a map
// first.
func FromStruct(s *structpb.Struct, kind string, into any) error {
	b, err := appendJSON(nil, structpb.NewStructValue(s))
	if err != nil {
		return errors.Wrapf(err, "cannot encode %s", kind)
	}
	return fromJSON(b, kind, into)
}

// appendJSON encodes a protobuf Value as JSON. protojson would do, but it
// sorts every object's keys, which made it most of the cost of a function
// that reads many required resources; the decoder does not care for order.
func appendJSON(b []byte, v *structpb.Value) ([]byte, error) {
	switch k := v.GetKind().(type) {
	case *structpb.Value_NullValue, nil:
		return append(b, "null"...), nil
	case *structpb.Value_BoolValue:
		return strconv.AppendBool(b, k.BoolValue), nil
	case *structpb.Value_NumberValue:
		if math.IsInf(k.NumberValue, 0) || math.IsNaN(k.NumberValue) {
			return nil, fmt.Errorf("%v is not a JSON number", k.NumberValue)
		}
		return strconv.AppendFloat(b, k.NumberValue, 'f', -1, 64), nil
	case *structpb.Value_StringValue:
		q, err := json.Marshal(k.StringValue)
		return append(b, q...), err
	case *structpb.Value_ListValue:
		b = append(b, '[')
		for i, e := range k.ListValue.GetValues() {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendJSON(b, e); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case *structpb.Value_StructValue:
		b = append(b, '{')
		first := true
		for name, e := range k.StructValue.GetFields() {
			if !first {
				b = append(b, ',')
			}
			first = false
			q, err := json.Marshal(name)
			if err != nil {
				return nil, err
			}
			b = append(append(b, q...), ':')
			if b, err = appendJSON(b, e); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	default:
		return nil, fmt.Errorf("unknown protobuf value %T", k)
	}
}

// Defaulter is a Go type of the consumer API with a default its schema
// cannot express (spec.labels.dedicated of a pool). Every decode applies it,
// so that no reader of the object can forget to.
type Defaulter interface{ Default() }

func fromJSON(b []byte, kind string, into any) error {
	if err := json.Unmarshal(b, into); err != nil {
		var te *json.UnmarshalTypeError
		if stderrors.As(err, &te) && te.Field != "" {
			return fmt.Errorf("%s is %s; want %s", fieldPath(te.Field), article(te.Value), typeName(te.Type))
		}
		return errors.Wrapf(err, "cannot decode %s", kind)
	}
	if d, ok := into.(Defaulter); ok {
		d.Default()
	}
	return nil
}

// typeName says what JSON a Go type takes.
func typeName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Pointer:
		return typeName(t.Elem())
	default:
		return "an object"
	}
}

func article(jsonKind string) string {
	switch jsonKind {
	case "array", "object":
		return "an " + jsonKind
	default: // string, bool, number, number 1.5 …
		return "a " + jsonKind
	}
}

// fieldPath drops the Go names of inlined structs from encoding/json's path
// (spec.PoolPlacement.zones is spec.zones to the user): JSON field names of
// the API are lowerCamelCase, Go type names are not.
func fieldPath(p string) string {
	segs := strings.Split(p, ".")
	out := segs[:0]
	for _, s := range segs {
		if s != "" && unicode.IsUpper(rune(s[0])) {
			continue
		}
		out = append(out, s)
	}
	return strings.Join(out, ".")
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

// SetDesired sets the composite's status fields (empty ones are left out:
// earlier pipeline steps may own them) and the desired composed resources.
func SetDesired(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, status map[string]any, desired map[resource.Name]*resource.DesiredComposed) error {
	dxr, err := request.GetDesiredCompositeResource(req)
	if err != nil {
		return errors.Wrap(err, "cannot get desired composite resource")
	}
	for k, v := range status {
		if v == "" || v == nil {
			continue
		}
		if err := dxr.Resource.SetValue("status."+k, v); err != nil {
			return errors.Wrapf(err, "cannot set status.%s", k)
		}
	}
	if err := response.SetDesiredCompositeResource(rsp, dxr); err != nil {
		return errors.Wrap(err, "cannot set desired composite resource")
	}
	return errors.Wrap(response.SetDesiredComposedResources(rsp, desired), "cannot set desired composed resources")
}
