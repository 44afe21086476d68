package pool

import (
	"fmt"
	"sort"
	"strings"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/response"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/c5c3/consumer-plane/apis/consumer/v1alpha1"
	ironcorev1alpha1 "github.com/c5c3/consumer-plane/apis/ironcore/v1alpha1"
	"github.com/c5c3/consumer-plane/internal/function"
	"github.com/c5c3/consumer-plane/internal/gardener"
)

// ResourceInventory names the pool's ServerInventory.
const ResourceInventory resource.Name = "inventory"

// ConditionInventory says whether the IronCore inventory can provide the
// pool's servers.
const ConditionInventory = "InventorySufficient"

// Reasons of ConditionInventory.
const (
	ReasonInventorySufficient   = "Sufficient"
	ReasonInventoryWaiting      = "Waiting"
	ReasonUnderProvisioned      = "UnderProvisioned"
	ReasonMaxWorkersUnreachable = "MaxWorkersUnreachable"
	ReasonLabelOverlap          = "LabelOverlap"
)

// Inventory is the verdict on a pool's bare-metal servers.
type Inventory struct {
	// Count is what the ServerInventory counted (nothing while Waiting).
	Count ironcorev1alpha1.ServerInventoryObservation
	// Reason and Message of ConditionInventory.
	Reason, Message string
	// Sizing is how the pool is sized for the raw capacity it is asked
	// for; nil when it is asked for none.
	Sizing *Sizing
}

// Sufficient reports whether the inventory holds every server the pool may
// grow to.
func (i *Inventory) Sufficient() bool { return i.Reason == ReasonInventorySufficient }

// Counted reports whether the ServerInventory has counted the servers.
func (i *Inventory) Counted() bool { return i.Reason != ReasonInventoryWaiting }

// Blocks reports whether the pool's Shoot must not be created: the servers
// are not counted yet, too few, or (for a dedicated pool) also another
// pool's. A Shoot that exists is never withdrawn.
func (i *Inventory) Blocks() bool {
	switch i.Reason {
	case ReasonInventoryWaiting, ReasonUnderProvisioned, ReasonLabelOverlap:
		return true
	}
	return false
}

// Status is the pool's status.inventory, nil until the servers are counted.
func (i *Inventory) Status() *v1alpha1.PoolInventory {
	if i == nil || !i.Counted() {
		return nil
	}
	c := i.Count
	return &v1alpha1.PoolInventory{
		Servers: c.Servers, Available: c.Available, Usable: c.Usable, ClaimedByOthers: c.ClaimedByOthers, Failed: c.Failed,
		Capacity: v1alpha1.Capacity{VCPUs: c.UsableCapacity.CPUs, MemoryGB: c.UsableCapacity.MemoryGiB},
	}
}

// SetCondition reports the verdict on the composite and its claim.
func (i *Inventory) SetCondition(rsp *fnv1.RunFunctionResponse) {
	if i == nil {
		return
	}
	if i.Sufficient() {
		response.ConditionTrue(rsp, ConditionInventory, i.Reason).WithMessage(i.Message).TargetCompositeAndClaim()
	} else {
		response.ConditionFalse(rsp, ConditionInventory, i.Reason).WithMessage(i.Message).TargetCompositeAndClaim()
	}
	i.Sizing.SetCondition(rsp)
}

// composeInventory adds the pool's ServerInventory — the metal-operator
// Servers carrying the labels its worker's ServerClaims select — sizes the
// worker for askedGiB of raw capacity (none: 0) from what it observed, and
// judges that against the worker's minimum and maximum.
func composeInventory(observed map[resource.Name]resource.ObservedComposed, desired map[resource.Name]*resource.DesiredComposed, w *gardener.Worker, askedGiB int64, providerConfig string, a Access) (*Inventory, error) {
	mr := &ironcorev1alpha1.ServerInventory{
		TypeMeta:   metav1.TypeMeta{APIVersion: ironcorev1alpha1.SchemeGroupVersion.String(), Kind: ironcorev1alpha1.ServerInventoryKind},
		ObjectMeta: metav1.ObjectMeta{Name: a.ProviderConfigName()},
		Spec: ironcorev1alpha1.ServerInventorySpec{
			ClusterManagedResourceSpec: xpv2.ClusterManagedResourceSpec{ProviderConfigReference: &xpv2.Reference{Name: providerConfig}},
			ForProvider: ironcorev1alpha1.ServerInventoryParameters{
				ServerSelector:  w.ServerLabels,
				ClaimNamePrefix: ownClaimPrefix(observed),
			},
		},
	}
	cd, err := function.Composed(mr)
	if err != nil {
		return nil, err
	}
	desired[ResourceInventory] = &resource.DesiredComposed{Resource: cd}
	labels := selector(w.ServerLabels)

	waiting := func(msg string) *Inventory {
		inv := &Inventory{Reason: ReasonInventoryWaiting, Message: msg}
		if askedGiB > 0 {
			inv.Sizing = &Sizing{Minimum: w.Minimum, Reason: ReasonSizingWaiting, Message: fmt.Sprintf("%s of raw capacity is sized once the IronCore inventory is counted: %s", GiB(askedGiB), msg)}
		}
		return inv
	}
	o, ok := observed[ResourceInventory]
	if !ok {
		return waiting(fmt.Sprintf("ServerInventory %s is being created to count the servers labelled %s", mr.Name, labels)), nil
	}
	obs := &ironcorev1alpha1.ServerInventory{}
	if err := function.FromObject(o.Resource.UnstructuredContent(), "ServerInventory "+o.Resource.GetName(), obs); err != nil {
		return nil, err
	}
	if c := obs.GetCondition(xpv2.TypeReady); c.Status != corev1.ConditionTrue {
		msg := fmt.Sprintf("waiting for ServerInventory %s to count the servers labelled %s", mr.Name, labels)
		if s := obs.GetCondition(xpv2.TypeSynced); s.Status == corev1.ConditionFalse && s.Message != "" {
			msg += ": " + s.Message
		}
		return waiting(msg), nil
	}
	// Counted is ready, whatever the verdict: a pool that cannot reach
	// maxWorkers still works, and one short of workers has no Shoot to be
	// ready anyway.
	desired[ResourceInventory].Ready = resource.ReadyTrue
	var sz *Sizing
	if askedGiB > 0 {
		sz = size(askedGiB, obs.Status.AtProvider, w)
	}
	inv := judge(obs.Status.AtProvider, *w, labels)
	inv.Sizing = sz
	return inv, nil
}

// judge compares the counted servers with what the worker asks for.
func judge(c ironcorev1alpha1.ServerInventoryObservation, w gardener.Worker, labels string) *Inventory {
	inv := &Inventory{Count: c}
	counted := fmt.Sprintf("%d servers labelled %s: %d available, %d claimed by another pool, %d failed", c.Servers, labels, c.Available, c.ClaimedByOthers, c.Failed)
	_, dedicated := w.ServerLabels[gardener.LabelDedicatedPool]
	switch {
	case dedicated && c.ClaimedByOthers > 0:
		held := make([]string, 0, len(c.ClaimedByOthersServers))
		for _, s := range c.ClaimedByOthersServers {
			held = append(held, s.Server+" by ServerClaim "+s.Claim)
		}
		inv.Reason = ReasonLabelOverlap
		inv.Message = fmt.Sprintf("the dedicated pool's server labels %s match %d servers another pool has claimed (%s): a dedicated pool's servers must be its own; relabel them or choose another spec.ironcore.machinePool",
			labels, c.ClaimedByOthers, strings.Join(held, ", "))
	case w.Minimum > c.Usable:
		inv.Reason = ReasonUnderProvisioned
		inv.Message = fmt.Sprintf("spec.workers %d exceeds the %d servers the IronCore inventory can provide (%s): %d more are needed before the pool's Shoot is created",
			w.Minimum, c.Usable, counted, w.Minimum-c.Usable)
	case w.Maximum > c.Usable:
		inv.Reason = ReasonMaxWorkersUnreachable
		inv.Message = fmt.Sprintf("spec.maxWorkers %d exceeds the %d servers the IronCore inventory can provide (%s): the pool cannot grow beyond %d nodes, %d short",
			w.Maximum, c.Usable, counted, c.Usable, w.Maximum-c.Usable)
	default:
		inv.Reason = ReasonInventorySufficient
		inv.Message = fmt.Sprintf("%d usable servers (%d CPUs, %d GiB) for %d to %d workers (%s)",
			c.Usable, c.UsableCapacity.CPUs, c.UsableCapacity.MemoryGiB, w.Minimum, w.Maximum, counted)
	}
	return inv
}

// ownClaimPrefix is the name prefix of the pool's own ServerClaims: Gardener
// names them after the Shoot's Machines, which begin with its technical ID.
// Until the Shoot has one, the pool holds no server.
func ownClaimPrefix(observed map[resource.Name]resource.ObservedComposed) string {
	o, ok := observed[ResourceShoot]
	if !ok {
		return ""
	}
	id, _ := o.Resource.GetString("status.technicalID") //nolint:errcheck // absent until Gardener assigns it.
	if id == "" {
		return ""
	}
	return id + "-"
}

// selector renders labels as a label selector, sorted.
func selector(labels map[string]string) string {
	s := make([]string, 0, len(labels))
	for k, v := range labels {
		s = append(s, k+"="+v)
	}
	sort.Strings(s)
	return strings.Join(s, ",")
}
