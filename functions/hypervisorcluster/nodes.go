package main

import (
	"fmt"
	"slices"
	"strings"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/response"

	"github.com/c5c3/consumer-plane/apis/consumer/v1alpha1"
	"github.com/c5c3/consumer-plane/internal/pool"
	"github.com/c5c3/consumer-plane/internal/remote"
)

// LabelCloud says, on a node of the pool's cluster, which cloud it serves
// (the cloud's composite name): the cloud's compute agents are scheduled
// by it.
const LabelCloud = pool.LabelCloud

// resourceNodeLabels labels the pool's nodes with their clouds.
const resourceNodeLabels resource.Name = "cloud-nodes"

// conditionNodesBound says whether every share of the pool has its nodes
// by name (docs/allocation.md).
const conditionNodesBound = "NodesBound"

// Reasons of conditionNodesBound.
const (
	reasonBound       = "Bound"
	reasonNodesWait   = "NodesWaiting"
	reasonNotReported = "NodesNotReported"
)

// binding is the outcome of naming the nodes of the pool's shares.
type binding struct {
	// reachable: the pool's cluster can be reached (its agents are placed);
	// before, nothing is said of nodes.
	reachable bool
	// reported: the pool's agents report its nodes, so the names are
	// decided now; else the shares keep the nodes they had.
	reported bool
	// waits says, per cloud (its claim), what its nodes wait for.
	waits []string
	// unreachable says why the agents' last report is not of now.
	unreachable string
}

// bindNodes names the nodes of each decided share (pool.BindNodes) from
// the nodes the pool's agents report, starting from the nodes each cloud
// held (its status.shares entry). A dedicated pool's cloud holds every
// usable node. While the agents do not report, each share keeps the nodes
// it had: a pool that briefly cannot read its Hypervisors moves nothing.
func bindNodes(xr *v1alpha1.XHypervisorCluster, shares []v1alpha1.PoolShare, hvs *hypervisors) binding {
	before := make(map[string][]string, len(xr.Status.Shares))
	for _, s := range xr.Status.Shares {
		before[s.Cloud] = slices.Concat(s.Nodes, s.Draining)
	}
	if !hvs.Current() {
		for i := range shares {
			if old := slices.IndexFunc(xr.Status.Shares, func(s v1alpha1.PoolShare) bool { return s.Cloud == shares[i].Cloud }); old >= 0 {
				old := xr.Status.Shares[old]
				shares[i].Nodes, shares[i].Draining, shares[i].Instances, shares[i].OutOfService = old.Nodes, old.Draining, old.Instances, old.OutOfService
			}
		}
		b := binding{reachable: hvs != nil}
		if hvs != nil {
			b.unreachable = hvs.Unreachable
		}
		return b
	}
	nodes := make([]pool.Node, 0, len(hvs.Observed.Nodes))
	usable := int64(0)
	for _, n := range hvs.Observed.Nodes {
		nodes = append(nodes, pool.Node{Name: n.Name, Zone: n.Zone, Usable: n.InService, Instances: n.Instances})
		if n.InService {
			usable++
		}
	}
	wants := make(map[string]int64, len(shares))
	for _, s := range shares {
		wants[s.Cloud] = int64(s.Allocated)
		if xr.Spec.Dedicated {
			wants[s.Cloud] = max(wants[s.Cloud], usable)
		}
	}
	bound := pool.BindNodes(nodes, wants, before)
	b := binding{reachable: true, reported: true}
	for i := range shares {
		got := bound[shares[i].Cloud]
		shares[i].Nodes, shares[i].Draining, shares[i].Instances, shares[i].OutOfService = got.Nodes, got.Draining, got.Instances, got.OutOfService
		if m := got.Message(); m != "" {
			b.waits = append(b.waits, shares[i].Claim+": "+m)
		}
	}
	return b
}

// setCondition reports the binding on the pool (NodesBound).
func (b binding) setCondition(rsp *fnv1.RunFunctionResponse, shares []v1alpha1.PoolShare) {
	switch {
	case !b.reachable:
	case !b.reported && b.unreachable != "":
		response.ConditionUnknown(rsp, conditionNodesBound, reasonUnreachable).
			WithMessage(b.unreachable + ": each cloud keeps the nodes it had until the pool's agents can be read again").TargetCompositeAndClaim()
	case !b.reported:
		response.ConditionUnknown(rsp, conditionNodesBound, reasonNotReported).
			WithMessage("the pool's agents do not report its nodes yet: each cloud keeps the nodes it had, and new shares are named once they do").TargetCompositeAndClaim()
	case len(b.waits) > 0:
		response.ConditionFalse(rsp, conditionNodesBound, reasonNodesWait).WithMessage(strings.Join(b.waits, "; ")).TargetCompositeAndClaim()
	default:
		n := 0
		for _, s := range shares {
			n += len(s.Nodes)
		}
		response.ConditionTrue(rsp, conditionNodesBound, reasonBound).
			WithMessage(fmt.Sprintf("%d node(s) bound to %d cloud(s), each share in full", n, len(shares))).TargetCompositeAndClaim()
	}
}

// composeNodeLabels labels each node of the pool's cluster that a share
// holds (its nodes and those draining) with the share's cloud, through the
// provider's NodeLabel; every other node is without the label. It does not
// gate the pool's readiness.
func composeNodeLabels(desired map[resource.Name]*resource.DesiredComposed, a pool.Access, shares []v1alpha1.PoolShare) error {
	values := map[string]string{}
	for _, s := range shares {
		for _, n := range slices.Concat(s.Nodes, s.Draining) {
			values[n] = s.Cloud
		}
	}
	nl, err := remote.NodeLabel(a.ProviderConfigName()+"-cloud-nodes", a.ProviderConfigName(), LabelCloud, values)
	if err != nil {
		return err
	}
	desired[resourceNodeLabels] = &resource.DesiredComposed{Resource: nl, Ready: resource.ReadyTrue}
	return nil
}
