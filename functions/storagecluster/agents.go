package main

import (
	"fmt"
	"strings"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/response"
	"google.golang.org/protobuf/types/known/durationpb"
	corev1 "k8s.io/api/core/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/c5c3/consumer-plane/apis/consumer/v1alpha1"
	"github.com/c5c3/consumer-plane/internal/cephhealth"
	"github.com/c5c3/consumer-plane/internal/function"
	"github.com/c5c3/consumer-plane/internal/remote"
)

// resourceCephStatus reads what the pool's storage agent publishes.
const resourceCephStatus resource.Name = "ceph-status"

// cephStatusName is the CephStatus the storage agent publishes into
// (cluster/agents/storage-agent.yaml keeps its default).
const cephStatusName = "ceph"

// conditionAgents says whether the pool's health and capacity come from its
// storage agent.
const conditionAgents = "AgentsReporting"

// cephStatus holds the fields of the storage agent's CephStatus
// (storage.c5c3.io/v1alpha1, agents/apis/storage) the pool reads. The
// agents are a Go module of their own, which depends on this one.
type cephStatus struct {
	Health string `json:"health"`
	Checks []struct {
		Name     string `json:"name"`
		Severity string `json:"severity"`
		Summary  string `json:"summary"`
	} `json:"checks"`
	Capacity struct {
		TotalBytes     int64 `json:"totalBytes"`
		UsedBytes      int64 `json:"usedBytes"`
		AvailableBytes int64 `json:"availableBytes"`
	} `json:"capacity"`
	OSDs struct {
		Total int32 `json:"total"`
		Up    int32 `json:"up"`
		In    int32 `json:"in"`
	} `json:"osds"`
	Monitors struct {
		Total    int32 `json:"total"`
		InQuorum int32 `json:"inQuorum"`
	} `json:"monitors"`
	ReportedAt     *metav1.Time     `json:"reportedAt"`
	ReportInterval *metav1.Duration `json:"reportInterval"`
}

// staleAfter is how many of its intervals the agent may miss before its
// report counts as stale: two are a passing stall (a busy API server, a
// new leader), three an agent that stopped or a cluster that cannot be
// read.
const staleAfter = 3

// agentReport is what the storage agent reports, or why it reports nothing.
type agentReport struct {
	Reporting bool
	// Unreachable says why the agent's CephStatus cannot be read now: the
	// report is then its last.
	Unreachable string
	Reason      string
	Message     string
	Health      string
	Checks      []string
	OSDs        *v1alpha1.OSDCount
	Capacity    *v1alpha1.StorageCapacity
	// StaleIn is how soon a current report goes stale unless a new one
	// comes: the function looks again then (0: never, or already stale).
	StaleIn time.Duration
}

// maxChecks bounds the health checks a status lists (the XRD's MaxItems).
const maxChecks = 16

// observeAgent composes an Object that only reads the storage agent's
// CephStatus in the pool's cluster, and reads it. It never gates the pool's
// readiness: Rook's CephCluster does; the agent adds detail.
func observeAgent(observed map[resource.Name]resource.ObservedComposed, desired map[resource.Name]*resource.DesiredComposed, pc string, now time.Time) (agentReport, error) {
	manifest := map[string]any{"apiVersion": "storage.c5c3.io/v1alpha1", "kind": "CephStatus", "metadata": map[string]any{"name": cephStatusName}}
	desired[resourceCephStatus] = &resource.DesiredComposed{Resource: remote.Observed(pc+"-ceph-status", pc, manifest), Ready: resource.ReadyTrue}
	waiting := agentReport{Reason: "Waiting", Message: "waiting for the pool's storage agent to publish CephStatus " + cephStatusName}
	o, ok := observed[resourceCephStatus]
	if !ok {
		return waiting, nil
	}
	s := &cephStatus{}
	if st, err := o.Resource.GetValue("status.atProvider.manifest.status"); err == nil {
		if m, ok := st.(map[string]any); ok {
			if err := function.FromObject(m, "CephStatus "+cephStatusName, s); err != nil {
				return agentReport{}, err
			}
		}
	}
	if s.Health == "" {
		if c := o.Resource.GetCondition(xpv2.TypeSynced); c.Status == corev1.ConditionFalse && c.Message != "" {
			waiting.Message += ": " + c.Message
		}
		return waiting, nil
	}
	r := agentReport{Reporting: true, Reason: "Reporting", Health: s.Health,
		OSDs: &v1alpha1.OSDCount{Total: s.OSDs.Total, Up: s.OSDs.Up, In: s.OSDs.In},
		Capacity: &v1alpha1.StorageCapacity{
			Total:     apiresource.NewQuantity(s.Capacity.TotalBytes, apiresource.BinarySI).String(),
			Available: apiresource.NewQuantity(s.Capacity.AvailableBytes, apiresource.BinarySI).String(),
			Used:      apiresource.NewQuantity(s.Capacity.UsedBytes, apiresource.BinarySI).String(),
		},
	}
	for _, c := range s.Checks {
		if len(r.Checks) == maxChecks {
			break
		}
		r.Checks = append(r.Checks, strings.TrimSuffix(c.Severity+" "+c.Name+": "+c.Summary, ": "))
	}
	report := fmt.Sprintf("%s: %d OSDs (%d up, %d in), %d of %d monitors in quorum",
		s.Health, s.OSDs.Total, s.OSDs.Up, s.OSDs.In, s.Monitors.InQuorum, s.Monitors.Total)
	if len(r.Checks) > 0 {
		report += "; " + strings.Join(r.Checks, "; ")
	}
	r.Message = "the storage agent reports " + report
	// A read that fails keeps the last one: the pool's cluster cannot be
	// reached (or read) now, and the report is from before. A report that
	// reads but has not advanced for staleAfter of the agent's intervals is
	// as old: the agent stopped, or the read only returns the last one (a
	// watch on a cluster that stopped answering).
	stale := ""
	if s.ReportedAt != nil && s.ReportInterval != nil && s.ReportInterval.Duration > 0 {
		limit := staleAfter * s.ReportInterval.Duration
		if age := now.Sub(s.ReportedAt.Time); age > limit {
			// The report's time, not its age: a message that changed with
			// every look would rewrite the pool's status every time.
			stale = fmt.Sprintf("the storage agent's last report is from %s, and it reports every %s: the agent or the pool's cluster does not answer",
				s.ReportedAt.UTC().Format(time.RFC3339), s.ReportInterval.Duration)
		} else {
			r.StaleIn = limit - age + time.Second
		}
	}
	switch c := o.Resource.GetCondition(xpv2.TypeSynced); {
	case c.Status == corev1.ConditionFalse:
		r.Unreachable = fmt.Sprintf("the storage agent's CephStatus %s cannot be read now: %s", cephStatusName, c.Message)
		r.Reason = "Unreachable"
	case stale != "":
		r.Unreachable = stale
		r.Reason = "Stale"
	default:
		return r, nil
	}
	r.StaleIn = 0
	r.Message = r.Unreachable + "; health, capacity and OSDs are its last report (" + report + "), which says nothing of now"
	return r, nil
}

// Recheck has the function look again when the agent's current report
// would go stale, if that is sooner than the response's TTL: no watch
// wakes a composite for a report that does not come.
func (r agentReport) Recheck(rsp *fnv1.RunFunctionResponse) {
	if r.StaleIn <= 0 {
		return
	}
	if rsp.Meta == nil {
		rsp.Meta = &fnv1.ResponseMeta{}
	}
	if ttl := rsp.Meta.GetTtl(); ttl == nil || ttl.AsDuration() > r.StaleIn {
		rsp.Meta.Ttl = durationpb.New(r.StaleIn)
	}
}

// SetCondition reports on the composite and its claim where the pool's
// health comes from. Nothing before the pool can be reached.
func (r agentReport) SetCondition(rsp *fnv1.RunFunctionResponse) {
	switch {
	case r.Reason == "":
	case r.Unreachable != "":
		response.ConditionFalse(rsp, conditionAgents, r.Reason).WithMessage(r.Message).TargetCompositeAndClaim()
		response.ConditionUnknown(rsp, cephhealth.ConditionDataAvailable, "Unreachable").
			WithMessage("whether the pool serves its data is unknown while its Ceph cannot be read: " + r.Unreachable).TargetCompositeAndClaim()
	case r.Reporting:
		response.ConditionTrue(rsp, conditionAgents, r.Reason).WithMessage(r.Message).TargetCompositeAndClaim()
		// What the checks mean for the tenants' data: Ceph's HEALTH_WARN
		// covers a clock skew and a zone lost alike (#54 §2).
		a := cephhealth.Of(r.Checks)
		set := response.ConditionTrue
		if !a.OK {
			set = response.ConditionFalse
		}
		set(rsp, cephhealth.ConditionDataAvailable, a.Reason).WithMessage(a.Message).TargetCompositeAndClaim()
	default:
		response.ConditionFalse(rsp, conditionAgents, r.Reason).WithMessage(r.Message + "; until then health and capacity are Rook's CephCluster's").TargetCompositeAndClaim()
	}
}
