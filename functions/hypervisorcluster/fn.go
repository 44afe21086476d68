package main

import (
	"context"
	"fmt"

	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
	"github.com/crossplane/function-sdk-go/response"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"

	"github.com/c5c3/consumer-plane/apis/consumer/v1alpha1"
	input "github.com/c5c3/consumer-plane/apis/input/v1alpha1"
	"github.com/c5c3/consumer-plane/internal/function"
	"github.com/c5c3/consumer-plane/internal/gardener"
)

func init() {
	// composed.From looks up the Shoot's GVK in this scheme.
	if err := gardencorev1beta1.AddToScheme(composed.Scheme); err != nil {
		panic(err)
	}
}

// Composed resource names, stable across releases: Crossplane matches
// desired and observed resources by them.
const resourceShoot resource.Name = "shoot"

// Condition of the composite (and claim) that says how far the pool is.
const (
	conditionShootReady = "ShootReady"
	workerName          = "hypervisor"
	poolKind            = "hypervisor"
)

// Function composes an XHypervisorCluster.
type Function struct {
	fnv1.UnimplementedFunctionRunnerServiceServer

	log logging.Logger
}

// RunFunction composes the pool's Shoot and reports the pool's phase.
func (f *Function) RunFunction(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	rsp := response.To(req, response.DefaultTTL)

	xr := &v1alpha1.XHypervisorCluster{}
	if err := function.ObservedComposite(req, xr); err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	log := f.log.WithValues("xr", xr.GetName(), "pool", xr.Spec.Name)

	settings := &input.ShootSettings{}
	if err := function.Input(req, settings); err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	settings.Default()
	if err := settings.Validate(); err != nil {
		response.Fatal(rsp, errors.Wrap(err, "invalid ShootSettings in the Composition"))
		return rsp, nil
	}
	if err := validate(&xr.Spec); err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}

	shoot, err := gardener.NewShoot(settings, cluster(&xr.Spec))
	if err != nil {
		response.Fatal(rsp, errors.Wrap(err, "cannot build the pool's Shoot"))
		return rsp, nil
	}
	cd, err := function.Composed(shoot)
	if err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}

	desired, err := request.GetDesiredComposedResources(req)
	if err != nil {
		response.Fatal(rsp, errors.Wrap(err, "cannot get desired composed resources"))
		return rsp, nil
	}
	desired[resourceShoot] = &resource.DesiredComposed{Resource: cd}

	phase, r, err := observe(req)
	if err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	if r.Ready {
		desired[resourceShoot].Ready = resource.ReadyTrue
	}

	dxr, err := request.GetDesiredCompositeResource(req)
	if err != nil {
		response.Fatal(rsp, errors.Wrap(err, "cannot get desired composite resource"))
		return rsp, nil
	}
	// Set only our own status fields: earlier pipeline steps may own others.
	if err := dxr.Resource.SetValue("status.phase", string(phase)); err != nil {
		response.Fatal(rsp, errors.Wrap(err, "cannot set status.phase"))
		return rsp, nil
	}
	if r.clusterName != "" {
		if err := dxr.Resource.SetValue("status.clusterName", r.clusterName); err != nil {
			response.Fatal(rsp, errors.Wrap(err, "cannot set status.clusterName"))
			return rsp, nil
		}
	}
	if err := response.SetDesiredCompositeResource(rsp, dxr); err != nil {
		response.Fatal(rsp, errors.Wrap(err, "cannot set desired composite resource"))
		return rsp, nil
	}
	if err := response.SetDesiredComposedResources(rsp, desired); err != nil {
		response.Fatal(rsp, errors.Wrap(err, "cannot set desired composed resources"))
		return rsp, nil
	}

	switch {
	case r.Ready:
		response.ConditionTrue(rsp, conditionShootReady, "Available").WithMessage(r.Message).TargetCompositeAndClaim()
	case r.Failed:
		response.ConditionFalse(rsp, conditionShootReady, "Failed").WithMessage(r.Message).TargetCompositeAndClaim()
	default:
		response.ConditionFalse(rsp, conditionShootReady, "Creating").WithMessage(r.Message).TargetCompositeAndClaim()
	}
	log.Debug("composed pool", "phase", phase)
	return rsp, nil
}

// validate checks what the XRD's schema cannot see or what a render bypasses,
// naming the field and what would be valid.
func validate(s *v1alpha1.HypervisorClusterParameters) error {
	if s.Workers > s.MaxWorkers {
		return fmt.Errorf("spec.workers (%d) must not exceed spec.maxWorkers (%d)", s.Workers, s.MaxWorkers)
	}
	if len(s.Zones) == 0 {
		return fmt.Errorf("spec.zones must name at least one availability zone of region %q", s.Region)
	}
	if s.IronCore.MachinePool == "" {
		return errors.New("spec.ironcore.machinePool must name the IronCore machine pool (server label value) of the pool")
	}
	return nil
}

// cluster says what the pool asks of Gardener.
func cluster(s *v1alpha1.HypervisorClusterParameters) gardener.Cluster {
	poolLabels := map[string]string{gardener.LabelPool: string(s.Name), gardener.LabelPoolKind: poolKind}
	nodeLabels := map[string]string{}
	for k, v := range s.Labels {
		nodeLabels[k] = v
	}
	for k, v := range poolLabels {
		nodeLabels[k] = v
	}
	return gardener.Cluster{
		Name:              string(s.Name),
		Region:            string(s.Region),
		KubernetesVersion: string(s.KubernetesVersion),
		Labels:            nodeLabels,
		Workers: []gardener.Worker{{
			Name:         workerName,
			MachineType:  string(s.IronCore.MachineClass),
			Minimum:      s.Workers,
			Maximum:      s.MaxWorkers,
			Zones:        s.Zones,
			NodeLabels:   nodeLabels,
			ServerLabels: map[string]string{gardener.LabelMachinePool: string(s.IronCore.MachinePool)},
		}},
	}
}

type readiness struct {
	gardener.Readiness
	clusterName string
}

// observe reads the observed Shoot, if Crossplane has created it yet.
func observe(req *fnv1.RunFunctionRequest) (v1alpha1.HypervisorPoolPhase, readiness, error) {
	observed, err := request.GetObservedComposedResources(req)
	if err != nil {
		return "", readiness{}, errors.Wrap(err, "cannot get observed composed resources")
	}
	o, ok := observed[resourceShoot]
	if !ok {
		return v1alpha1.HypervisorPoolPhaseProvisioning, readiness{Readiness: gardener.Readiness{Message: "the Shoot is being created"}}, nil
	}
	shoot := &gardencorev1beta1.Shoot{}
	if err := function.ObservedAs(o.Resource, shoot); err != nil {
		return "", readiness{}, err
	}
	r := readiness{Readiness: gardener.ReadinessOf(shoot), clusterName: shoot.Status.TechnicalID}
	switch {
	case r.Ready:
		return v1alpha1.HypervisorPoolPhaseReady, r, nil
	case r.Failed:
		return v1alpha1.HypervisorPoolPhaseFailed, r, nil
	default:
		return v1alpha1.HypervisorPoolPhaseProvisioning, r, nil
	}
}
