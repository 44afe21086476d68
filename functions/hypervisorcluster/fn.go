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
	run, err := pool.Run(req, rsp, xr, func(l pool.Landscape) (pool.Spec, error) {
		if err := pool.ValidateName(xr, xr.Spec.Name); err != nil {
			return pool.Spec{}, err
		}
		if err := l.DefaultZones(&xr.Spec.Zones, xr.Status.Zones, xr.Spec.Region); err != nil {
			return pool.Spec{}, err
		}
		return pool.Spec{Cluster: cluster(&xr.Spec), Kind: pool.KindHypervisor, Inventory: true, MachineField: "spec.ironcore.machineClass"}, validate(&xr.Spec)
	})
	if err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	pool.RequireShares(rsp, string(xr.Spec.Name))
	if run == nil {
		return rsp, nil
	}
	st, desired := run.State, run.Desired
	status := st.Status()
	decided := pool.DecideShares(req, pool.Nodes, int64(xr.Spec.Workers), shares(xr))
	decidedShares := poolShares(decided)
	status["shares"], status["allocatedNodes"] = decidedShares, decided.Allocated
	// spec.dedicated or spec.labels.dedicated (XHypervisorCluster.Default).
	status["dedicated"] = xr.Spec.Dedicated
	var hvs *hypervisors
	if st.Placing(run.Observed) {
		// The node agents go into the pool's cluster as soon as it can be
		// reached (and stay), and the Hypervisors they publish are read
		// from there.
		if err := pool.PlaceLayer(desired, run.Observed, run.Access, run.Settings); err != nil {
			response.Fatal(rsp, err)
			return rsp, nil
		}
		if hvs, err = composeHypervisors(run.Observed, desired, run.Access); err != nil {
			response.Fatal(rsp, err)
			return rsp, nil
		}
	}
	if st.Ready() && st.Shoot.Changing {
		status["phase"] = string(v1alpha1.HypervisorPoolPhaseScaling)
	}
	// Which nodes each share holds, once the agents say which nodes exist,
	// said on the nodes themselves.
	bound := bindNodes(xr, decidedShares, hvs)
	if hvs != nil {
		if err := composeNodeLabels(desired, run.Access, decidedShares); err != nil {
			response.Fatal(rsp, err)
			return rsp, nil
		}
	}
	switch {
	case hvs.Reporting():
		status["nodeCount"] = hvs.Observed.InService
		status["availableCapacity"] = hvs.Available()
		status["hypervisors"] = hvs.Status()
		status["capacitySource"] = string(v1alpha1.CapacitySourceAgents)
		if hvs.Unreachable != "" {
			status["unreachable"] = hvs.Unreachable
		}
	case st.Shoot.Ready:
		// Until the pool's agents report, every node Gardener reports
		// Ready is one of the pool's minimum.
		status["nodeCount"] = xr.Spec.Workers
		c, err := capacity(run.Landscape, &xr.Spec)
		if err != nil {
			response.Warning(rsp, err).TargetCompositeAndClaim()
		}
		if c != nil {
			status["availableCapacity"] = c
			status["capacitySource"] = string(v1alpha1.CapacitySourceCloudProfile)
		}
	}
	if err := function.SetDesired(req, rsp, status, desired); err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	st.SetConditions(rsp)
	pool.SetLayerCondition(rsp, desired, run.Observed)
	hvs.SetCondition(rsp)
	pool.SetAllocationCondition(rsp, pool.Nodes, int64(xr.Spec.Workers), decided)
	bound.setCondition(rsp, decidedShares)
	f.log.Debug("composed hypervisor pool", "xr", xr.GetName(), "pool", xr.Spec.Name, "phase", st.Phase())
	return rsp, nil
}

// capacity is the pool's minimum node count times what one machine of its
// machine class offers, or nil while there is no CloudProfile.
func capacity(l pool.Landscape, s *v1alpha1.HypervisorClusterParameters) (*v1alpha1.Capacity, error) {
	cp := l.CloudProfile()
	if cp == nil {
		return nil, nil
	}
	mc, ok := gardener.MachineCapacityOf(cp, string(s.IronCore.MachineClass))
	if !ok {
		return nil, fmt.Errorf("spec.ironcore.machineClass %q is not a machine type of %s: the pool's capacity is unknown",
			s.IronCore.MachineClass, l.CloudProfileName())
	}
	nodes := int64(s.Workers)
	return &v1alpha1.Capacity{VCPUs: mc.CPUs * nodes, MemoryGB: mc.MemoryBytes * nodes / (1 << 30)}, nil
}

// validate checks what the XRD's schema cannot see or what a render bypasses,
// naming the field and what would be valid.
func validate(s *v1alpha1.HypervisorClusterParameters) error {
	if s.Workers > s.MaxWorkers {
		return fmt.Errorf("spec.workers (%d) must not exceed spec.maxWorkers (%d)", s.Workers, s.MaxWorkers)
	}
	if s.IronCore.MachinePool == "" {
		return errors.New("spec.ironcore.machinePool must name the IronCore machine pool (server label value) of the pool")
	}
	return pool.ValidateAccess(s.PoolPlacement, s.PoolAccess)
}

// cluster says what the pool asks of Gardener.
func cluster(s *v1alpha1.HypervisorClusterParameters) gardener.Cluster {
	return pool.Cluster(pool.KindHypervisor, s.PoolPlacement, s.PoolAccess, pool.Machines{
		Worker: workerName, MachinePool: s.IronCore.MachinePool, MachineClass: s.IronCore.MachineClass,
		Minimum: s.Workers, Maximum: s.MaxWorkers,
	})
}

// shares are the pool's shares as its status records them.
func shares(xr *v1alpha1.XHypervisorCluster) []pool.Share {
	ss := make([]pool.Share, 0, len(xr.Status.Shares))
	for _, s := range xr.Status.Shares {
		ss = append(ss, pool.Share{Cloud: s.Cloud, Claim: s.Claim, Asked: int64(s.Asked), Allocated: int64(s.Allocated)})
	}
	return ss
}

// poolShares are decided shares as the status records them: a share is
// never more than the pool's workers, an int32.
func poolShares(d pool.Decision) []v1alpha1.PoolShare {
	ss := make([]v1alpha1.PoolShare, 0, len(d.Shares))
	for _, s := range d.Shares {
		ss = append(ss, v1alpha1.PoolShare{Cloud: s.Cloud, Claim: s.Claim, Asked: int32(s.Asked), Allocated: int32(s.Allocated)}) //nolint:gosec // bounded by spec.workers
	}
	return ss
}
