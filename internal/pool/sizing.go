package pool

import (
	"fmt"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/response"
	apiresource "k8s.io/apimachinery/pkg/api/resource"

	ironcorev1alpha1 "github.com/c5c3/consumer-plane/apis/ironcore/v1alpha1"
	"github.com/c5c3/consumer-plane/internal/gardener"
)

// ConditionCapacitySized says whether a storage pool's nodes hold the raw
// capacity it is asked for (spec.capacity, spec.ceph.targetCapacity).
const ConditionCapacitySized = "CapacitySized"

// Reasons of ConditionCapacitySized.
const (
	ReasonSized            = "Sized"
	ReasonSizingWaiting    = "Waiting"
	ReasonDrivesUnknown    = "DrivesUnknown"
	ReasonMaxWorkersTooLow = "MaxWorkersTooLow"
	ReasonServersTooFew    = "ServersTooFew"
)

// Sizing is what a pool's asked raw capacity takes of its servers.
type Sizing struct {
	// Needed are the nodes of the smallest usable server's drives that hold
	// the asked capacity; Minimum is the worker minimum the pool's Shoot
	// gets for it (Needed, within the claim's spec.workers and what
	// maxWorkers and the inventory allow).
	Needed, Minimum int32
	Reason, Message string
}

// size sizes w for askedGiB of raw capacity from the counted servers c: its
// minimum rises to the nodes the smallest usable server's drives need to
// hold it, at most to its maximum and the usable servers. It never falls
// below the claim's spec.workers. A pool that cannot reach the capacity
// keeps what it can and says why.
func size(askedGiB int64, c ironcorev1alpha1.ServerInventoryObservation, w *gardener.Worker) *Sizing {
	s := &Sizing{Minimum: w.Minimum}
	asked := GiB(askedGiB)
	if c.SmallestDiskGiB <= 0 {
		s.Reason = ReasonDrivesUnknown
		s.Message = fmt.Sprintf("%s of raw capacity cannot be sized yet: a usable server of the pool reports no drives (the metal-operator discovers them); the pool keeps spec.workers %d", asked, w.Minimum)
		return s
	}
	needed := (askedGiB + c.SmallestDiskGiB - 1) / c.SmallestDiskGiB
	s.Needed = int32(min(needed, 1<<30)) //nolint:gosec // bounded just above
	takes := fmt.Sprintf("%s of raw capacity takes %d nodes of %s of drives (the smallest of the %d usable servers)", asked, s.Needed, GiB(c.SmallestDiskGiB), c.Usable)
	reach := min(w.Maximum, c.Usable)
	s.Minimum = max(w.Minimum, min(s.Needed, reach))
	switch {
	case s.Needed > c.Usable && c.Usable <= w.Maximum:
		s.Reason = ReasonServersTooFew
		s.Message = fmt.Sprintf("%s, and the IronCore inventory has %d usable servers: the pool holds at least %s on them; add servers with the pool's labels or lower spec.capacity",
			takes, c.Usable, GiB(int64(min(s.Minimum, c.Usable))*c.SmallestDiskGiB))
	case s.Needed > w.Maximum:
		s.Reason = ReasonMaxWorkersTooLow
		s.Message = fmt.Sprintf("%s, more than spec.maxWorkers %d: the pool holds at least %s; raise spec.maxWorkers or lower spec.capacity",
			takes, w.Maximum, GiB(int64(s.Minimum)*c.SmallestDiskGiB))
	case s.Needed <= w.Minimum:
		s.Reason = ReasonSized
		s.Message = fmt.Sprintf("%s: spec.workers %d hold it", takes, w.Minimum)
	default:
		s.Reason = ReasonSized
		s.Message = fmt.Sprintf("%s: the pool's Shoot keeps at least %d workers (spec.workers %d)", takes, s.Minimum, w.Minimum)
	}
	w.Minimum = s.Minimum
	return s
}

// Sized reports whether the pool's nodes hold the capacity asked for.
func (s *Sizing) Sized() bool { return s.Reason == ReasonSized }

// SetCondition says on the composite and its claim how the pool is sized
// for its capacity. A pool asked for none has no such condition.
func (s *Sizing) SetCondition(rsp *fnv1.RunFunctionResponse) {
	if s == nil {
		return
	}
	if s.Sized() {
		response.ConditionTrue(rsp, ConditionCapacitySized, s.Reason).WithMessage(s.Message).TargetCompositeAndClaim()
		return
	}
	response.ConditionFalse(rsp, ConditionCapacitySized, s.Reason).WithMessage(s.Message).TargetCompositeAndClaim()
}

// GiB renders n GiB as a quantity (700Ti, 12Ti, 1536Gi).
func GiB(n int64) string {
	return apiresource.NewQuantity(n<<30, apiresource.BinarySI).String()
}
