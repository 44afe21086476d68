// Package xrdtest installs the consumer API's XRDs into a test API server as
// Crossplane would: the composite's and the claim's CRDs, derived by
// crossplane-runtime's xcrd. Apart from test/kubetest, whose importers (the
// agents' module among them) need not carry crossplane-runtime.
package xrdtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/xcrd"
	xv1 "github.com/crossplane/crossplane/apis/v2/apiextensions/v1"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// InstallAsCrossplaneWould creates the CRDs Crossplane derives from an XRD
// with claim names — the composite's and the claim's, with every field and
// printer column Crossplane adds — using Crossplane's own derivation
// (crossplane-runtime's xcrd, which Crossplane core runs).
func InstallAsCrossplaneWould(ctx context.Context, kube client.Client, x *xv1.CompositeResourceDefinition) error {
	xr, err := xcrd.ForCompositeResource(x)
	if err != nil {
		return fmt.Errorf("crossplane cannot derive the composite CRD of %s: %w", x.GetName(), err)
	}
	claim, err := xcrd.ForCompositeResourceClaim(x)
	if err != nil {
		return fmt.Errorf("crossplane cannot derive the claim CRD of %s: %w", x.GetName(), err)
	}
	for _, crd := range []*extv1.CustomResourceDefinition{xr, claim} {
		crd.SetOwnerReferences(nil) // no XRD object exists in this API server
		if err := kube.Create(ctx, crd); err != nil {
			return fmt.Errorf("the real kube-apiserver refuses the CRD %s derived from %s: %w", crd.GetName(), x.GetName(), err)
		}
		if err := waitEstablished(ctx, kube, crd.GetName()); err != nil {
			return err
		}
	}
	return nil
}

// InstallXRDs installs, as InstallAsCrossplaneWould, every XRD in dir (the
// package's package/xrds), and returns how many it found.
func InstallXRDs(ctx context.Context, kube client.Client, dir string) (int, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return 0, err
	}
	for _, f := range files {
		b, err := os.ReadFile(f) //nolint:gosec // the package's own XRDs
		if err != nil {
			return 0, err
		}
		x := &xv1.CompositeResourceDefinition{}
		if err := yaml.Unmarshal(b, x); err != nil {
			return 0, fmt.Errorf("%s: %w", f, err)
		}
		if err := InstallAsCrossplaneWould(ctx, kube, x); err != nil {
			return 0, err
		}
	}
	return len(files), nil
}

func waitEstablished(ctx context.Context, kube client.Client, name string) error {
	for {
		crd := &extv1.CustomResourceDefinition{}
		if err := kube.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
			return err
		}
		for _, c := range crd.Status.Conditions {
			if c.Type == extv1.Established && c.Status == extv1.ConditionTrue {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("CRD %s not established: %w", name, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}
