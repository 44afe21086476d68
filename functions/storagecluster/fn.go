package main

import (
	"context"
	"fmt"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/response"
	corev1 "k8s.io/api/core/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/c5c3/consumer-plane/apis/consumer/v1alpha1"
	"github.com/c5c3/consumer-plane/internal/cephplacement"
	"github.com/c5c3/consumer-plane/internal/function"
	"github.com/c5c3/consumer-plane/internal/pool"
	"github.com/c5c3/consumer-plane/internal/remote"
)

// workerName names the pool's worker pool in its Shoot.
const workerName = "storage"

// Composed resources of the pool cluster, after those of internal/pool.
const (
	resourceCephCluster resource.Name = "ceph-cluster"
	resourceMgrPool     resource.Name = "ceph-mgr-pool"
	resourceAgentClient resource.Name = "ceph-agent-client"
)

// conditionCephReady says whether the pool's Ceph cluster is up.
const conditionCephReady = "CephReady"

// Function composes an XStorageCluster.
type Function struct {
	fnv1.UnimplementedFunctionRunnerServiceServer

	log logging.Logger
}

// RunFunction composes the pool's Shoot, then access to its cluster, then the
// Rook CephCluster in it, and reports the pool's phase, health and capacity.
func (f *Function) RunFunction(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	rsp := response.To(req, response.DefaultTTL)

	xr := &v1alpha1.XStorageCluster{}
	s := &xr.Spec
	run, err := pool.Run(req, rsp, xr, func(l pool.Landscape) (pool.Spec, error) {
		if err := pool.ValidateName(xr, s.Name); err != nil {
			return pool.Spec{}, err
		}
		// A stretched pool spans the two zones it names: none are taken
		// from the region (validate says so).
		if s.ArbiterCluster == "" {
			if err := l.DefaultZones(&s.Zones, xr.Status.Zones, s.Region); err != nil {
				return pool.Spec{}, err
			}
		}
		return pool.Spec{Kind: pool.KindStorage, Inventory: true, MachineField: "spec.ironcore.machineClass", CapacityGiB: askedGiB(xr), Cluster: pool.Cluster(pool.KindStorage, s.PoolPlacement, s.PoolAccess, pool.Machines{
			Worker: workerName, MachinePool: s.IronCore.MachinePool, MachineClass: s.IronCore.MachineClass,
			Minimum: s.Workers, Maximum: s.MaxWorkers,
		})}, validate(s)
	})
	if err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	pool.RequireShares(rsp, string(s.Name))
	if run == nil {
		return rsp, nil
	}
	requireArbiterCluster(rsp, s)
	st, observed, desired, access := run.State, run.Observed, run.Desired, run.Access
	status := st.Status()
	shareable := shareableGB(xr)
	decided := pool.DecideShares(req, pool.Gigabytes, shareable, shares(xr))
	status["shares"], status["allocatedGB"], status["shareableGB"] = storageShares(decided), decided.Allocated, shareable
	// spec.dedicated or spec.labels.dedicated (XStorageCluster.Default).
	status["dedicated"] = xr.Spec.Dedicated
	status["dataPlacement"] = placement(s).Status()
	ceph := cephState{Message: "waiting for access to the pool's cluster"}
	var agent agentReport
	// A pool in one site has no arbiter to wait for.
	arbiterReady, arbiterMsg := s.ArbiterCluster == "", "waiting for access to the pool's cluster"
	stretchReady, stretchMsg := s.ArbiterCluster == "", "waiting for the pool's Ceph and its arbiter"
	if st.Placing(observed) {
		// Objects in the pool cluster once it can be reached, and kept.
		pc := access.ProviderConfigName()
		if err := pool.PlaceLayer(desired, observed, access, run.Settings); err != nil {
			response.Fatal(rsp, err)
			return rsp, nil
		}
		// Rook's objects once the layer brought Rook's CRDs (and kept once
		// composed, whatever the layer's later runs say): created before,
		// each was refused and tried again with a growing back-off.
		if pool.Kept(observed, resourceCephCluster) || pool.LayerApplied(observed) {
			desired[resourceCephCluster] = &resource.DesiredComposed{Resource: remote.Object(pc+"-ceph-cluster", pc, cephCluster(s))}
			desired[resourceMgrPool] = &resource.DesiredComposed{Resource: remote.Object(pc+"-ceph-mgr-pool", pc, mgrPool(s))}
			// The agent's user neither gates the pool (the agent adds detail) nor
			// waits for it: Rook creates it once the cluster is up.
			desired[resourceAgentClient] = &resource.DesiredComposed{Resource: remote.Object(pc+"-ceph-agent-client", pc, agentClient()), Ready: resource.ReadyTrue}
			ceph = observeCeph(observed, desired)
		} else {
			ceph.Message = "waiting for Flux to apply the pool's layer, which brings Rook's CRDs (see " + pool.ConditionLayerApplied + ")"
		}
		if agent, err = observeAgent(observed, desired, pc); err != nil {
			response.Fatal(rsp, err)
			return rsp, nil
		}
		if ceph.Ready || pool.Kept(observed, resourceCephAdmin, resourceCephProviderConfig) {
			if err := composeCephAccess(access, observed, desired); err != nil {
				response.Fatal(rsp, err)
				return rsp, nil
			}
		}
		if s.ArbiterCluster != "" {
			if arbiterReady, arbiterMsg, err = composeArbiter(req, xr, run); err != nil {
				response.Fatal(rsp, err)
				return rsp, nil
			}
		}
		// Stretch mode needs the provider's access to Ceph and the arbiter's
		// monitor, the tiebreaker.
		if s.ArbiterCluster != "" && (ceph.Ready && arbiterReady || pool.Kept(observed, resourceStretchMode)) {
			if stretchReady, stretchMsg, err = composeStretchMode(s, access, observed, desired); err != nil {
				response.Fatal(rsp, err)
				return rsp, nil
			}
		}
		status["phase"] = string(v1alpha1.StoragePoolPhaseProvisioning)
		switch {
		case !ceph.Ready || !arbiterReady || !stretchReady:
		case st.Shoot.Changing:
			status["phase"] = string(v1alpha1.StoragePoolPhaseExpanding)
		default:
			status["phase"] = string(v1alpha1.StoragePoolPhaseReady)
		}
		status["health"] = ceph.Health
		if ceph.Capacity != nil {
			status["capacity"] = capacity(xr, ceph.Capacity)
		}
		if agent.Reporting {
			status["health"], status["capacity"], status["osds"] = agent.Health, capacity(xr, agent.Capacity), agent.OSDs
			if len(agent.Checks) > 0 {
				status["healthChecks"] = agent.Checks
			}
			if agent.Unreachable != "" {
				status["unreachable"] = agent.Unreachable
			}
		}
	}
	if _, ok := status["capacity"]; !ok && askedGiB(xr) > 0 {
		status["capacity"] = capacity(xr, nil)
	}
	if err := function.SetDesired(req, rsp, status, desired); err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	st.SetConditions(rsp)
	pool.SetLayerCondition(rsp, desired, observed)
	agent.SetCondition(rsp)
	setCondition(rsp, conditionCephReady, ceph.Ready, "Available", ceph.Message)
	// A pool in one site has neither an arbiter nor stretch mode to report.
	if s.ArbiterCluster != "" {
		setCondition(rsp, conditionArbiterReady, arbiterReady, "Available", arbiterMsg)
		setCondition(rsp, conditionStretchMode, stretchReady, "Enabled", stretchMsg)
	}
	pool.SetAllocationCondition(rsp, pool.Gigabytes, shareable, decided)
	f.log.Debug("composed storage pool", "xr", xr.GetName(), "pool", s.Name, "phase", status["phase"])
	return rsp, nil
}

// setCondition reports a condition of the pool on its composite and claim:
// True with reason trueReason, or False (Waiting), saying msg.
func setCondition(rsp *fnv1.RunFunctionResponse, t string, ok bool, trueReason, msg string) {
	if ok {
		response.ConditionTrue(rsp, t, trueReason).WithMessage(msg).TargetCompositeAndClaim()
		return
	}
	response.ConditionFalse(rsp, t, "Waiting").WithMessage(msg).TargetCompositeAndClaim()
}

// shareablePercent is the part of a pool's raw capacity its clouds' Ceph
// pools may be given: Ceph's nearfull ratio (0.85). Ceph stops every write
// of the pool at its full ratio (0.95): the rest is headroom for what no
// tenant's quota counts (docs/allocation.md).
const shareablePercent = 85

// shareableGB is the raw capacity the pool shares out among its clouds' Ceph
// pool quotas: shareablePercent of the capacity it is asked for
// (spec.ceph.targetCapacity or spec.capacity) or of what Ceph last reported,
// whichever is less (a pool's Ceph that holds less than asked for — fewer or
// smaller drives, an OSD out — gives no cloud a quota it cannot hold); of
// the one known while the other is not; 0 while neither is (nothing is
// granted). What a cloud was given stays its own when it falls
// (pool.Decide).
func shareableGB(xr *v1alpha1.XStorageCluster) int64 {
	raw := askedGiB(xr)
	if c := xr.Status.Capacity; c != nil {
		if q, err := apiresource.ParseQuantity(c.Total); err == nil && q.Value() > 0 {
			if total := q.Value() >> 30; raw == 0 || total < raw {
				raw = total
			}
		}
	}
	return raw * shareablePercent / 100
}

// askedGiB is the raw capacity the pool is asked for, in GiB; 0 when none.
func askedGiB(xr *v1alpha1.XStorageCluster) int64 {
	if q, err := apiresource.ParseQuantity(string(xr.Spec.TargetCapacity())); err == nil {
		return q.Value() >> 30
	}
	return 0
}

// capacity is the pool's status.capacity: what it is asked for beside what
// its Ceph reports (reported, nil until it does), and what the total holds
// at the pool's replication.
func capacity(xr *v1alpha1.XStorageCluster, reported *v1alpha1.StorageCapacity) *v1alpha1.StorageCapacity {
	c := &v1alpha1.StorageCapacity{Asked: string(xr.Spec.TargetCapacity())}
	if reported == nil {
		return c
	}
	c.Total, c.Available, c.Used = reported.Total, reported.Available, reported.Used
	if q, err := apiresource.ParseQuantity(reported.Total); err == nil {
		if r := int64(placement(&xr.Spec).Replicas); r > 0 {
			c.Usable = pool.GiB(q.Value() / r >> 30)
		}
	}
	return c
}

// shares are the pool's shares as its status records them.
func shares(xr *v1alpha1.XStorageCluster) []pool.Share {
	ss := make([]pool.Share, 0, len(xr.Status.Shares))
	for _, s := range xr.Status.Shares {
		ss = append(ss, pool.Share{Cloud: s.Cloud, Claim: s.Claim, Asked: s.AskedGB, Allocated: s.AllocatedGB})
	}
	return ss
}

// storageShares are decided shares as the status records them.
func storageShares(d pool.Decision) []v1alpha1.StoragePoolShare {
	ss := make([]v1alpha1.StoragePoolShare, 0, len(d.Shares))
	for _, s := range d.Shares {
		ss = append(ss, v1alpha1.StoragePoolShare{Cloud: s.Cloud, Claim: s.Claim, AskedGB: s.Asked, AllocatedGB: s.Allocated})
	}
	return ss
}

// validate checks what the XRD's schema cannot see or what a render bypasses,
// naming the field and what would be valid.
func validate(s *v1alpha1.StorageClusterParameters) error {
	if s.Workers > s.MaxWorkers {
		return fmt.Errorf("spec.workers (%d) must not exceed spec.maxWorkers (%d)", s.Workers, s.MaxWorkers)
	}
	if s.IronCore.MachinePool == "" {
		return errors.New("spec.ironcore.machinePool must name the IronCore machine pool (server label value) of the pool")
	}
	if s.Ceph.ReplicationFactor < 1 || s.Ceph.ReplicationFactor > 5 {
		return fmt.Errorf("spec.ceph.replicationFactor (%d) must be between 1 and 5", s.Ceph.ReplicationFactor)
	}
	if s.Ceph.ReplicationFactor > s.Workers {
		return fmt.Errorf("spec.ceph.replicationFactor (%d) needs as many nodes: spec.workers is %d", s.Ceph.ReplicationFactor, s.Workers)
	}
	if s.Capacity != "" && s.Ceph.TargetCapacity != "" && s.Capacity != s.Ceph.TargetCapacity {
		return fmt.Errorf("spec.capacity (%s) and spec.ceph.targetCapacity (%s) both size the pool: set one of them, or the same size in both", s.Capacity, s.Ceph.TargetCapacity)
	}
	for _, size := range []struct {
		field string
		value v1alpha1.Quantity
	}{{"spec.ceph.targetCapacity", s.Ceph.TargetCapacity}, {"spec.capacity", s.Capacity}} {
		if size.value == "" {
			continue
		}
		if _, err := apiresource.ParseQuantity(string(size.value)); err != nil {
			return fmt.Errorf("%s %q is not a size such as 500Ti", size.field, size.value)
		}
	}
	if s.ArbiterCluster != "" {
		if len(validation.IsDNS1123Label(s.ArbiterCluster)) > 0 {
			return fmt.Errorf("spec.arbiterCluster %q must name a ControlPlaneCluster (its claim's name, a DNS label)", s.ArbiterCluster)
		}
		if len(s.Zones) != stretchedZones {
			return fmt.Errorf("spec.zones must name exactly %d zones for a stretched pool (spec.arbiterCluster is set), one monitor in each; it names %d", stretchedZones, len(s.Zones))
		}
		if s.Ceph.ReplicationFactor != cephplacement.StretchReplicas {
			return fmt.Errorf("spec.ceph.replicationFactor is %d: a stretched pool (spec.arbiterCluster is set) keeps %d replicas in each of its %d zones, so that either zone holds the data alone; set it to %d",
				s.Ceph.ReplicationFactor, cephplacement.StretchPerZone, stretchedZones, cephplacement.StretchReplicas)
		}
	}
	return pool.ValidateAccess(s.PoolPlacement, s.PoolAccess)
}

// cephState is what the pool's CephCluster reports.
type cephState struct {
	Ready    bool
	Message  string
	Health   string
	Capacity *v1alpha1.StorageCapacity
}

// observeCeph reads the CephCluster as provider-kubernetes observed it
// (status.atProvider.manifest) and marks the Objects that are ready.
func observeCeph(observed map[resource.Name]resource.ObservedComposed, desired map[resource.Name]*resource.DesiredComposed) cephState {
	if function.ObservedReady(observed, resourceMgrPool) {
		desired[resourceMgrPool].Ready = resource.ReadyTrue
	}
	o, ok := observed[resourceCephCluster]
	if !ok {
		return cephState{Message: "the CephCluster is being created"}
	}
	c := cephState{}
	c.Health, _ = o.Resource.GetString("status.atProvider.manifest.status.ceph.health")
	capacity := &v1alpha1.StorageCapacity{}
	for field, into := range map[string]*string{"bytesTotal": &capacity.Total, "bytesAvailable": &capacity.Available, "bytesUsed": &capacity.Used} {
		if b, err := o.Resource.GetInteger("status.atProvider.manifest.status.ceph.capacity." + field); err == nil {
			*into = apiresource.NewQuantity(b, apiresource.BinarySI).String()
			c.Capacity = capacity
		}
	}
	ready := o.Resource.GetCondition(xpv2.TypeReady)
	if ready.Status != corev1.ConditionTrue {
		phase, _ := o.Resource.GetString("status.atProvider.manifest.status.phase")
		c.Message = fmt.Sprintf("the CephCluster is not ready yet (phase %q)", phase)
		return c
	}
	desired[resourceCephCluster].Ready = resource.ReadyTrue
	c.Ready = true
	c.Message = fmt.Sprintf("Ceph reports %s", c.Health)
	return c
}
