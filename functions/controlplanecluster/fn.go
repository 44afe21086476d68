package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/response"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/c5c3/consumer-plane/apis/consumer/v1alpha1"
	"github.com/c5c3/consumer-plane/internal/function"
	"github.com/c5c3/consumer-plane/internal/gardener"
	"github.com/c5c3/consumer-plane/internal/pool"
)

const workerName = "control-plane"

// Function composes an XControlPlaneCluster.
type Function struct {
	fnv1.UnimplementedFunctionRunnerServiceServer

	log logging.Logger
}

// RunFunction composes the cluster's Shoot, then access to it and its layer,
// and reports the cluster's phase.
func (f *Function) RunFunction(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	rsp := response.To(req, response.DefaultTTL)

	xr := &v1alpha1.XControlPlaneCluster{}
	run, err := pool.Run(req, rsp, xr, func(l pool.Landscape) (pool.Spec, error) {
		if err := l.DefaultZones(&xr.Spec.Zones, xr.Status.Zones, xr.Spec.Region); err != nil {
			return pool.Spec{}, err
		}
		name, err := clusterName(xr)
		if err != nil {
			return pool.Spec{}, err
		}
		return pool.Spec{Cluster: cluster(name, &xr.Spec), Kind: pool.KindControlPlane, MachineField: "spec.machineType"}, validate(&xr.Spec)
	})
	if err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	if run == nil {
		return rsp, nil
	}
	st, desired, access := run.State, run.Desired, run.Access
	status := st.Status()
	if st.Shoot.Ready {
		status["kubeconfig"] = map[string]any{"name": access.SecretName(), "namespace": access.SecretNamespace}
	}
	if st.Placing(run.Observed) {
		// The clouds' ControlPlanes need the c5c3 operator's CRD, which
		// the cluster's layer brings: the cluster is Ready once Flux
		// applied it, and until then Provisioning (clouds wait on the
		// phase).
		if err := pool.PlaceLayer(desired, run.Observed, access, run.Settings); err != nil {
			response.Fatal(rsp, err)
			return rsp, nil
		}
		if !pool.LayerApplied(run.Observed) && status["phase"] == "Ready" {
			status["phase"] = "Provisioning"
		}
	}
	if err := function.SetDesired(req, rsp, status, desired); err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	st.SetConditions(rsp)
	pool.SetLayerCondition(rsp, desired, run.Observed)
	f.log.Debug("composed control-plane cluster", "xr", xr.GetName(), "cluster", access.Name, "phase", st.Phase())
	return rsp, nil
}

// clusterName is what tenants' OpenStackClusters call the cluster
// (spec.controlPlaneCluster): the claim's name, or the composite's when it is
// not claimed. Its Shoot is named after it (gardener.ShootName), so it may
// be longer than Gardener allows Shoot names; it also names objects in other
// clusters, hence v1alpha1.MaxNameLength.
func clusterName(xr *v1alpha1.XControlPlaneCluster) (string, error) {
	name := xr.GetLabels()[function.LabelClaimName]
	what := "the claim's metadata.name"
	if name == "" {
		name, what = xr.GetName(), "metadata.name"
	}
	if len(name) > v1alpha1.MaxNameLength || len(validation.IsDNS1123Label(name)) > 0 {
		return "", fmt.Errorf("%s %q names the control-plane cluster: it must be a DNS label of at most %d characters", what, name, v1alpha1.MaxNameLength)
	}
	return name, nil
}

// validate checks what the XRD's schema cannot see or what a render bypasses,
// naming the field and what would be valid.
func validate(s *v1alpha1.ControlPlaneClusterParameters) error {
	if s.Workers > s.MaxWorkers {
		return fmt.Errorf("spec.workers (%d) must not exceed spec.maxWorkers (%d)", s.Workers, s.MaxWorkers)
	}
	if s.HighAvailability && len(s.Zones) < 3 {
		return fmt.Errorf("spec.zones names %d zone(s) (%s); spec.highAvailability needs at least 3 zones of region %q", len(s.Zones), strings.Join(s.Zones, ", "), s.Region)
	}
	if s.VolumeSize != "" {
		if _, err := apiresource.ParseQuantity(string(s.VolumeSize)); err != nil {
			return fmt.Errorf("spec.volumeSize %q is not a size such as 200Gi", s.VolumeSize)
		}
	}
	return nil
}

// cluster says what the control-plane cluster asks of Gardener.
func cluster(name string, s *v1alpha1.ControlPlaneClusterParameters) gardener.Cluster {
	labels := map[string]string{gardener.LabelPool: name, gardener.LabelPoolKind: string(pool.KindControlPlane)}
	var serverLabels map[string]string
	if s.MachinePool != "" {
		serverLabels = map[string]string{gardener.LabelMachinePool: string(s.MachinePool)}
	}
	w := gardener.Worker{
		Name:         workerName,
		MachineType:  string(s.MachineType),
		Minimum:      s.Workers,
		Maximum:      s.MaxWorkers,
		Zones:        s.Zones,
		NodeLabels:   labels,
		ServerLabels: serverLabels,
	}
	if s.VolumeSize != "" {
		w.VolumeSize = string(s.VolumeSize)
	}
	return gardener.Cluster{
		Name:              name,
		Region:            string(s.Region),
		KubernetesVersion: string(s.KubernetesVersion),
		Labels:            labels,
		Workers:           []gardener.Worker{w},
		HighAvailability:  s.HighAvailability,
	}
}
