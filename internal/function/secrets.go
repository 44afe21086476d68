package function

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/response"
)

// redactedKey is the one key provider-kubernetes leaves in the data of a
// Secret it reports in an Object's status when it runs with
// --sanitize-secrets.
const redactedKey = "redacted"

// secretGuard refuses to compose while a provider-kubernetes Object's
// status holds a Secret's data: provider-kubernetes then runs without
// --sanitize-secrets, and the keys it copied (CephX and Rook admin keys,
// admin clouds.yaml, OVN client keys) would travel in every function
// request, log line and `kubectl get -o yaml` of the Object. Nothing is
// applied (a fatal result changes nothing) until the flag is set; the
// composite's Synced condition says so.
type secretGuard struct {
	fnv1.FunctionRunnerServiceServer

	log logging.Logger
}

// RunFunction runs the function unless the request carries Secret data.
func (g secretGuard) RunFunction(ctx context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	leaks := unredactedSecrets(req)
	if len(leaks) == 0 {
		return g.FunctionRunnerServiceServer.RunFunction(ctx, req)
	}
	msg := fmt.Sprintf("provider-kubernetes runs without --sanitize-secrets: the status of %s holds Secret data, which every request to this function then carries; nothing is composed until provider-kubernetes runs with the flag (a DeploymentRuntimeConfig arg)",
		strings.Join(leaks, ", "))
	g.log.Info(msg)
	rsp := response.To(req, response.DefaultTTL)
	response.Fatal(rsp, errors.New(msg))
	return rsp, nil
}

// unredactedSecrets names the observed provider-kubernetes Objects whose
// status reports a Secret with data other than the redaction marker.
func unredactedSecrets(req *fnv1.RunFunctionRequest) []string {
	var out []string
	for name, r := range req.GetObserved().GetResources() {
		f := r.GetResource().GetFields()
		if !strings.HasPrefix(f["apiVersion"].GetStringValue(), "kubernetes.crossplane.io/") || f["kind"].GetStringValue() != "Object" {
			continue
		}
		m := f["status"].GetStructValue().GetFields()["atProvider"].GetStructValue().GetFields()["manifest"].GetStructValue().GetFields()
		if m["apiVersion"].GetStringValue() != "v1" || m["kind"].GetStringValue() != "Secret" {
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
