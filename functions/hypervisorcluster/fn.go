package main

import (
	"context"
	"fmt"

	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/response"

	"github.com/c5c3/consumer-plane/apis/consumer/v1alpha1"
	"github.com/c5c3/consumer-plane/internal/function"
	"github.com/c5c3/consumer-plane/internal/gardener"
	"github.com/c5c3/consumer-plane/internal/pool"
)

// workerName names the pool's worker pool in its Shoot.
const workerName = "hypervisor"

// Function composes an XHypervisorCluster.
type Function struct {
	fnv1.UnimplementedFunctionRunnerServiceServer

	log logging.Logger
}

// RunFunction composes the pool's Shoot, then access to its cluster, and
// reports the pool's phase.
func (f *Function) RunFunction(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	rsp := response.To(req, response.DefaultTTL)

	xr := &v1alpha1.XHypervisorCluster{}
	run, err := pool.Run(req, xr, func() (pool.Spec, error) {
		return pool.Spec{Cluster: cluster(&xr.Spec), Kind: pool.KindHypervisor}, validate(&xr.Spec)
	})
	if err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	st, desired := run.State, run.Desired
	status := map[string]any{"phase": st.Phase(), "clusterName": st.ClusterName}
	if err := function.SetDesired(req, rsp, status, desired); err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	st.SetConditions(rsp)
	f.log.Debug("composed hypervisor pool", "xr", xr.GetName(), "pool", xr.Spec.Name, "phase", st.Phase())
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
	return pool.ValidateAccess(s.PoolAccess)
}

// cluster says what the pool asks of Gardener.
func cluster(s *v1alpha1.HypervisorClusterParameters) gardener.Cluster {
	return pool.Cluster(pool.KindHypervisor, s.PoolPlacement, s.PoolAccess, pool.Machines{
		Worker: workerName, MachinePool: s.IronCore.MachinePool, MachineClass: s.IronCore.MachineClass,
		Minimum: s.Workers, Maximum: s.MaxWorkers,
	})
}
