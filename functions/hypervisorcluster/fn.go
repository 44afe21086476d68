package main

import (
	"context"
	"fmt"
	"strings"

	protectionv1beta1 "github.com/crossplane/crossplane/apis/v2/protection/v1beta1"
	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/response"

	"github.com/c5c3/consumer-plane/apis/consumer/v1alpha1"
	"github.com/c5c3/consumer-plane/internal/agentbundle"
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
		return pool.Spec{Cluster: cluster(&xr.Spec), Kind: pool.KindHypervisor, Inventory: true}, validate(&xr.Spec)
	})
	if err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	requireShares(rsp, xr)
	if run == nil {
		return rsp, nil
	}
	st, desired := run.State, run.Desired
	status := st.Status()
	shares := decideShares(req, xr)
	status["shares"], status["allocatedNodes"] = shares.Shares, shares.Allocated
	var hvs *hypervisors
	if st.Ready() {
		// The node agents go into the pool's cluster as soon as it can be
		// reached, and the Hypervisors they publish are read from there.
		if err := pool.PlaceAgents(desired, run.Access, agentbundle.Hypervisor, pool.AgentImages(run.Settings)); err != nil {
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
	switch {
	case hvs.Reporting():
		status["nodeCount"] = hvs.Observed.InService
		status["availableCapacity"] = hvs.Available()
		status["hypervisors"] = hvs.Status()
		status["capacitySource"] = string(v1alpha1.CapacitySourceAgents)
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
	hvs.SetCondition(rsp)
	setAllocationCondition(rsp, xr, shares)
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
	return pool.ValidateAccess(s.PoolAccess)
}

// cluster says what the pool asks of Gardener.
func cluster(s *v1alpha1.HypervisorClusterParameters) gardener.Cluster {
	return pool.Cluster(pool.KindHypervisor, s.PoolPlacement, s.PoolAccess, pool.Machines{
		Worker: workerName, MachinePool: s.IronCore.MachinePool, MachineClass: s.IronCore.MachineClass,
		Minimum: s.Workers, Maximum: s.MaxWorkers,
	})
}

// requireShares asks for the share records of the clouds on the pool: the
// ClusterUsages they compose for it, labelled with its name.
func requireShares(rsp *fnv1.RunFunctionResponse, xr *v1alpha1.XHypervisorCluster) {
	function.RequireLabelled(rsp, pool.RequirementShares, protectionv1beta1.SchemeGroupVersion.String(), protectionv1beta1.ClusterUsageKind,
		map[string]string{pool.LabelUsedPool: string(xr.Spec.Name)})
}

// decideShares decides the clouds' shares of the pool (see pool.Decide);
// until Crossplane supplies the records, the pool keeps the shares it
// decided before.
func decideShares(req *fnv1.RunFunctionRequest, xr *v1alpha1.XHypervisorCluster) pool.Decision {
	if !function.Supplied(req, pool.RequirementShares) {
		d := pool.Decision{Shares: xr.Status.Shares, Allocated: xr.Status.AllocatedNodes}
		if d.Shares == nil {
			d.Shares = []v1alpha1.PoolShare{}
		}
		return d
	}
	var records []pool.Record
	for _, r := range function.RequiredItems(req, pool.RequirementShares) {
		if rec, ok := pool.RecordFrom(r); ok {
			records = append(records, rec)
		}
	}
	return pool.Decide(xr.Spec.Workers, xr.Status.Shares, records)
}

// conditionAllocation says how the pool's nodes are shared, and which
// requests wait for nodes to be freed.
const conditionAllocation = "Allocation"

func setAllocationCondition(rsp *fnv1.RunFunctionResponse, xr *v1alpha1.XHypervisorCluster, d pool.Decision) {
	if len(d.Blocked) > 0 {
		response.ConditionFalse(rsp, conditionAllocation, "Blocked").
			WithMessage("no request for nodes is granted while a cloud's share record cannot be read: " + strings.Join(d.Blocked, "; ")).TargetCompositeAndClaim()
		return
	}
	msg := fmt.Sprintf("%d of %d nodes allocated to %d cloud(s)", d.Allocated, xr.Spec.Workers, len(d.Shares))
	var waiting []string
	for _, s := range d.Shares {
		if s.Asked > s.Allocated {
			waiting = append(waiting, fmt.Sprintf("%s asks for %d, has %d", s.Claim, s.Asked, s.Allocated))
		}
	}
	if len(waiting) > 0 {
		response.ConditionFalse(rsp, conditionAllocation, "RequestsWaiting").
			WithMessage(msg + "; waiting for free nodes: " + strings.Join(waiting, ", ")).TargetCompositeAndClaim()
		return
	}
	response.ConditionTrue(rsp, conditionAllocation, "Decided").WithMessage(msg).TargetCompositeAndClaim()
}
