package function

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/response"
	"google.golang.org/protobuf/types/known/structpb"
)

// redactedKey is the one key provider-kubernetes leaves in the data of a
// Secret it reports in an Object's status when it runs with
// --sanitize-secrets.
const redactedKey = "redacted"

// lastApplied is the annotation in which provider-kubernetes keeps the
// manifest it applied, data included; --sanitize-secrets leaves it as is.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// secretGuard keeps Secret values out of provider-kubernetes Objects, where
// every function request, log line and `kubectl get -o yaml` of the Object
// would carry them (#40). Keys reach other clusters through the provider's
// SecretCopy instead (internal/remote). It refuses to compose:
//
//   - while an observed Object's status holds a Secret's data:
//     provider-kubernetes runs without --sanitize-secrets, and the keys it
//     reads (Rook admin keys, admin clouds.yaml, OVN client keys) travel in
//     every request. The function does not run;
//   - a desired Object that writes a Secret with data, or copies a Secret's
//     field into its manifest (patchesFrom): the value would land in the
//     Object's spec and in the remote object's last-applied annotation,
//     which its status returns;
//   - while an observed Object that stays desired holds Secret data in
//     its spec or in that annotation. One the function no longer composes
//     (left by an earlier release) is being deleted: a warning names it.
//
// Nothing is applied while refused (a fatal result changes nothing); the
// composite's Synced condition says why.
type secretGuard struct {
	fnv1.FunctionRunnerServiceServer

	log logging.Logger
}

// RunFunction runs the function unless its request or its response carries
// or would write Secret data.
func (g secretGuard) RunFunction(ctx context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	if leaks := unredactedSecrets(req); len(leaks) > 0 {
		return g.refuse(req, fmt.Sprintf("provider-kubernetes runs without --sanitize-secrets: the status of %s holds Secret data, which every request to this function then carries; nothing is composed until provider-kubernetes runs with the flag (a DeploymentRuntimeConfig arg)",
			strings.Join(leaks, ", "))), nil
	}
	rsp, err := g.FunctionRunnerServiceServer.RunFunction(ctx, req)
	if err != nil || rsp == nil {
		return rsp, err
	}
	desired := rsp.GetDesired().GetResources()
	var refused []string
	for _, name := range slices.Sorted(maps.Keys(desired)) {
		if where := secretValuesIn(desired[name].GetResource(), false); len(where) > 0 {
			refused = append(refused, fmt.Sprintf("%s would write %s", describe(name, desired[name].GetResource()), strings.Join(where, " and ")))
		}
	}
	observed := req.GetObserved().GetResources()
	for _, name := range slices.Sorted(maps.Keys(observed)) {
		r := observed[name].GetResource()
		where := secretValuesIn(r, true)
		if len(where) == 0 {
			continue
		}
		if _, kept := desired[name]; kept {
			refused = append(refused, fmt.Sprintf("%s holds %s", describe(name, r), strings.Join(where, " and ")))
			continue
		}
		msg := fmt.Sprintf("%s holds %s; it is no longer composed and is being deleted", describe(name, r), strings.Join(where, " and "))
		g.log.Info(msg)
		response.Warning(rsp, errors.New(msg)).TargetComposite()
	}
	if len(refused) > 0 {
		return g.refuse(req, "Secret values must not pass through Objects (every reader of an Object and every function request would see them): "+
			strings.Join(refused, "; ")+"; nothing is composed"), nil
	}
	return rsp, nil
}

func (g secretGuard) refuse(req *fnv1.RunFunctionRequest, msg string) *fnv1.RunFunctionResponse {
	g.log.Info(msg)
	rsp := response.To(req, response.DefaultTTL)
	response.Fatal(rsp, errors.New(msg))
	return rsp
}

func describe(name string, r *structpb.Struct) string {
	f := r.GetFields()
	return fmt.Sprintf("%s %s (%s)", f["kind"].GetStringValue(), f["metadata"].GetStructValue().GetFields()["name"].GetStringValue(), name)
}

// isObject says whether r is a provider-kubernetes Object.
func isObject(r *structpb.Struct) bool {
	f := r.GetFields()
	return strings.HasPrefix(f["apiVersion"].GetStringValue(), "kubernetes.crossplane.io/") && f["kind"].GetStringValue() == "Object"
}

// secret returns m's fields when m is a Secret's manifest.
func secret(m *structpb.Struct) (map[string]*structpb.Value, bool) {
	f := m.GetFields()
	return f, f["apiVersion"].GetStringValue() == "v1" && f["kind"].GetStringValue() == "Secret"
}

// secretValuesIn says where a provider-kubernetes Object holds, or would
// write, Secret values: its manifest's data or stringData, a patchesFrom of
// a Secret's field, and (observed only) the last-applied annotation of the
// Secret its status reports.
func secretValuesIn(r *structpb.Struct, observed bool) []string {
	if !isObject(r) {
		return nil
	}
	var out []string
	spec := r.GetFields()["spec"].GetStructValue().GetFields()
	if m, ok := secret(spec["forProvider"].GetStructValue().GetFields()["manifest"].GetStructValue()); ok {
		for _, field := range []string{"data", "stringData"} {
			if len(m[field].GetStructValue().GetFields()) > 0 {
				out = append(out, "Secret values in spec.forProvider.manifest."+field)
			}
		}
	}
	for i, ref := range spec["references"].GetListValue().GetValues() {
		p := ref.GetStructValue().GetFields()["patchesFrom"].GetStructValue().GetFields()
		if p["kind"].GetStringValue() == "Secret" {
			out = append(out, fmt.Sprintf("a Secret's field copied by spec.references[%d].patchesFrom (%s)", i, p["fieldPath"].GetStringValue()))
		}
	}
	if observed {
		m, ok := secret(r.GetFields()["status"].GetStructValue().GetFields()["atProvider"].GetStructValue().GetFields()["manifest"].GetStructValue())
		if ok {
			if _, has := m["metadata"].GetStructValue().GetFields()["annotations"].GetStructValue().GetFields()[lastApplied]; has {
				out = append(out, "the applied Secret, values included, in status.atProvider.manifest's "+lastApplied+" annotation")
			}
		}
	}
	return out
}

// unredactedSecrets names the observed provider-kubernetes Objects whose
// status reports a Secret with data other than the redaction marker.
func unredactedSecrets(req *fnv1.RunFunctionRequest) []string {
	var out []string
	for name, r := range req.GetObserved().GetResources() {
		if !isObject(r.GetResource()) {
			continue
		}
		f := r.GetResource().GetFields()
		m, ok := secret(f["status"].GetStructValue().GetFields()["atProvider"].GetStructValue().GetFields()["manifest"].GetStructValue())
		if !ok {
			continue
		}
		for key := range m["data"].GetStructValue().GetFields() {
			if key != redactedKey {
				out = append(out, fmt.Sprintf("Object %s (%s)", f["metadata"].GetStructValue().GetFields()["name"].GetStringValue(), name))
				break
			}
		}
	}
	slices.Sort(out)
	return out
}
