package main

import (
	"fmt"
	"strings"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/response"
	corev1 "k8s.io/api/core/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/c5c3/consumer-plane/apis/consumer/v1alpha1"
	kubernetesv1alpha1 "github.com/c5c3/consumer-plane/apis/kubernetes/v1alpha1"
	"github.com/c5c3/consumer-plane/internal/cephhealth"
	"github.com/c5c3/consumer-plane/internal/function"
)

// resourceStorageReport reads what the pool's storage agent publishes. A
// new name, not the provider-kubernetes Object's "ceph-status" it replaces:
// core deletes that Object (observe-only: the agent's CephStatus stays) as
// a composed resource no longer desired.
const resourceStorageReport resource.Name = "storage-report"

// cephStatusName is the CephStatus the storage agent publishes into
// (cluster/agents/storage-agent.yaml keeps its default).
const cephStatusName = "ceph"

// conditionAgents says whether the pool's health and capacity come from its
// storage agent.
const conditionAgents = "AgentsReporting"

// agentReport is what the storage agent reports, or why it reports nothing.
type agentReport struct {
	Reporting bool
	// Unreachable says why the agent's report is not current: the report is
	// then its last.
	Unreachable string
	Reason      string
	Message     string
	Health      string
	Checks      []string
	OSDs        *v1alpha1.OSDCount
	Capacity    *v1alpha1.StorageCapacity
}

// maxChecks bounds the health checks a status lists (the XRD's MaxItems).
const maxChecks = 16

// observeAgent composes a StorageReport, which reads the storage agent's
// CephStatus in the pool's cluster through the pool's ProviderConfig pc,
// and reads it. It never gates the pool's readiness: Rook's CephCluster
// does; the agent adds detail.
//
// Not a provider-kubernetes Object of the CephStatus: the agent publishes
// its report every interval whether or not anything changed, and such an
// Object changed with every report, and with it this composite, which core
// then reconciled, applying each of its composed resources again. The
// StorageReport changes only when the report says something new, and says
// itself when the report goes stale.
func observeAgent(observed map[resource.Name]resource.ObservedComposed, desired map[resource.Name]*resource.DesiredComposed, pc string) (agentReport, error) {
	rep := &kubernetesv1alpha1.StorageReport{
		TypeMeta:   metav1.TypeMeta{APIVersion: kubernetesv1alpha1.SchemeGroupVersion.String(), Kind: kubernetesv1alpha1.StorageReportKind},
		ObjectMeta: metav1.ObjectMeta{Name: pc},
		Spec: kubernetesv1alpha1.StorageReportSpec{
			ClusterManagedResourceSpec: xpv2.ClusterManagedResourceSpec{ProviderConfigReference: &xpv2.Reference{Name: pc}},
			ForProvider:                kubernetesv1alpha1.StorageReportParameters{CephStatus: cephStatusName},
		},
	}
	cd, err := function.Composed(rep)
	if err != nil {
		return agentReport{}, err
	}
	desired[resourceStorageReport] = &resource.DesiredComposed{Resource: cd, Ready: resource.ReadyTrue}
	waiting := agentReport{Reason: "Waiting", Message: "waiting for the pool's storage agent to publish CephStatus " + cephStatusName}
	o, ok := observed[resourceStorageReport]
	if !ok {
		return waiting, nil
	}
	got := &kubernetesv1alpha1.StorageReport{}
	if err := function.FromObject(o.Resource.UnstructuredContent(), "StorageReport "+o.Resource.GetName(), got); err != nil {
		return agentReport{}, err
	}
	s, synced := got.Status.AtProvider, got.GetCondition(xpv2.TypeSynced)
	if s.Health == "" {
		if synced.Status == corev1.ConditionFalse && synced.Message != "" {
			waiting.Message += ": " + synced.Message
		}
		return waiting, nil
	}
	r := agentReport{Reporting: true, Reason: "Reporting", Health: s.Health,
		OSDs: &v1alpha1.OSDCount{Total: s.OSDs, Up: s.OSDsUp, In: s.OSDsIn},
		Capacity: &v1alpha1.StorageCapacity{
			Total:     apiresource.NewQuantity(s.TotalBytes, apiresource.BinarySI).String(),
			Available: apiresource.NewQuantity(s.AvailableBytes, apiresource.BinarySI).String(),
			Used:      apiresource.NewQuantity(s.UsedBytes, apiresource.BinarySI).String(),
		},
	}
	for _, c := range s.Checks {
		if len(r.Checks) == maxChecks {
			break
		}
		r.Checks = append(r.Checks, strings.TrimSuffix(c.Severity+" "+c.Name+": "+c.Summary, ": "))
	}
	report := fmt.Sprintf("%s: %d OSDs (%d up, %d in), %d of %d monitors in quorum",
		s.Health, s.OSDs, s.OSDsUp, s.OSDsIn, s.MonitorsInQuorum, s.Monitors)
	if len(r.Checks) > 0 {
		report += "; " + strings.Join(r.Checks, "; ")
	}
	r.Message = "the storage agent reports " + report
	// A read that fails keeps the last one: the pool's cluster cannot be
	// reached (or read) now, and the report is from before. A report that
	// has not advanced for three of the agent's intervals is as old: the
	// agent stopped, or cannot publish.
	switch {
	case synced.Status == corev1.ConditionFalse:
		r.Unreachable = fmt.Sprintf("the storage agent's CephStatus %s cannot be read now: %s", cephStatusName, synced.Message)
		r.Reason = "Unreachable"
	case s.StaleSince != nil:
		every := "its interval"
		if s.ReportInterval != nil {
			every = s.ReportInterval.Duration.String()
		}
		r.Unreachable = fmt.Sprintf("the storage agent's last report is from %s, and it reports every %s: the agent or the pool's cluster does not answer",
			s.StaleSince.UTC().Format(time.RFC3339), every)
		r.Reason = "Stale"
	default:
		return r, nil
	}
	r.Message = r.Unreachable + "; health, capacity and OSDs are its last report (" + report + "), which says nothing of now"
	return r, nil
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
