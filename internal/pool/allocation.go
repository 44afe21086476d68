package pool

import (
	"fmt"
	"strings"

	protectionv1beta1 "github.com/crossplane/crossplane/apis/v2/protection/v1beta1"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/response"

	"github.com/c5c3/consumer-plane/internal/function"
)

// ConditionAllocation says how a pool is shared out, and which requests
// wait for room to be freed.
const ConditionAllocation = "Allocation"

// RequireShares asks for the share records of the clouds on the pool: the
// ClusterUsages they compose for it, labelled with its name.
func RequireShares(rsp *fnv1.RunFunctionResponse, pool string) {
	function.RequireLabelled(rsp, RequirementShares, protectionv1beta1.SchemeGroupVersion.String(), protectionv1beta1.ClusterUsageKind,
		map[string]string{LabelUsedPool: pool})
}

// DecideShares decides the clouds' shares of a pool of capacity (see
// Decide); until Crossplane supplies the records, the pool keeps the
// shares it decided before.
func DecideShares(req *fnv1.RunFunctionRequest, u Unit, capacity int64, before []Share) Decision {
	if !function.Supplied(req, RequirementShares) {
		d := Decision{Shares: before}
		for _, s := range before {
			d.Allocated += s.Allocated
		}
		if d.Shares == nil {
			d.Shares = []Share{}
		}
		return d
	}
	return Decide(capacity, before, Records(u, function.RequiredItems(req, RequirementShares)))
}

// SetAllocationCondition says on the pool and its claim how it is shared
// out of capacity, or why it grants nothing.
func SetAllocationCondition(rsp *fnv1.RunFunctionResponse, u Unit, capacity int64, d Decision) {
	if len(d.Blocked) > 0 {
		response.ConditionFalse(rsp, ConditionAllocation, "Blocked").
			WithMessage("no request for " + u.Noun + " is granted while a cloud's share record cannot be read: " + strings.Join(d.Blocked, "; ")).TargetCompositeAndClaim()
		return
	}
	msg := fmt.Sprintf("%d of %d %s allocated to %d cloud(s)", d.Allocated, capacity, u.Noun, len(d.Shares))
	var waiting []string
	for _, s := range d.Shares {
		if s.Asked > s.Allocated {
			waiting = append(waiting, fmt.Sprintf("%s asks for %d, has %d", s.Claim, s.Asked, s.Allocated))
		}
	}
	if len(waiting) > 0 {
		response.ConditionFalse(rsp, ConditionAllocation, "RequestsWaiting").
			WithMessage(msg + "; waiting for free " + u.Noun + ": " + strings.Join(waiting, ", ")).TargetCompositeAndClaim()
		return
	}
	response.ConditionTrue(rsp, ConditionAllocation, "Decided").WithMessage(msg).TargetCompositeAndClaim()
}
