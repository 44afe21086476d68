package main

import (
	"fmt"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/crossplane/function-sdk-go/resource"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cephv1alpha1 "github.com/c5c3/consumer-plane/apis/ceph/v1alpha1"
	"github.com/c5c3/consumer-plane/apis/consumer/v1alpha1"
	"github.com/c5c3/consumer-plane/internal/cephplacement"
	"github.com/c5c3/consumer-plane/internal/function"
	"github.com/c5c3/consumer-plane/internal/pool"
)

// A stretched pool's Ceph runs in Ceph's stretch mode, as Rook sets it for a
// stretched CephCluster whose arbiter it runs itself. Here the arbiter's
// monitor is external, so Rook's stretchCluster setting cannot be used; the
// provider's StretchMode sets it instead, once the pool's Ceph can be
// reached and the arbiter has joined: the monitors located in their nodes'
// zones, the arbiter's as the tiebreaker in its own site (named after its
// control-plane cluster), election by connectivity, and every pool, Rook's
// own included, placed as the clouds' pools are (internal/cephplacement).
const resourceStretchMode resource.Name = "ceph-stretch-mode"

// conditionStretchMode says whether a stretched pool's Ceph runs in stretch
// mode.
const conditionStretchMode = "StretchMode"

// composeStretchMode composes the pool's StretchMode and says whether Ceph
// runs in it, and if not, what it waits on.
func composeStretchMode(s *v1alpha1.StorageClusterParameters, a pool.Access, observed map[resource.Name]resource.ObservedComposed, desired map[resource.Name]*resource.DesiredComposed) (bool, string, error) {
	sm, err := function.Composed(&cephv1alpha1.StretchMode{
		TypeMeta:   metav1.TypeMeta{APIVersion: cephv1alpha1.SchemeGroupVersion.String(), Kind: "StretchMode"},
		ObjectMeta: metav1.ObjectMeta{Name: a.ProviderConfigName() + "-stretch-mode"},
		Spec: cephv1alpha1.StretchModeSpec{
			ClusterManagedResourceSpec: xpv2.ClusterManagedResourceSpec{ProviderConfigReference: &xpv2.Reference{Name: a.ProviderConfigName()}},
			ForProvider: cephv1alpha1.StretchModeParameters{
				Root: "default", ZoneType: cephplacement.DomainZone, DeviceClass: string(s.Ceph.DeviceClass),
				TiebreakerZone: s.ArbiterCluster,
			},
		},
	})
	if err != nil {
		return false, "", err
	}
	desired[resourceStretchMode] = &resource.DesiredComposed{Resource: sm}
	o, ok := observed[resourceStretchMode]
	if !ok {
		return false, "waiting for the provider to enable Ceph's stretch mode", nil
	}
	ready := o.Resource.GetCondition(xpv2.TypeReady)
	if ready.Status != corev1.ConditionTrue {
		msg := "waiting for the provider to enable Ceph's stretch mode"
		if ready.Message != "" {
			msg = ready.Message
		} else if m := o.Resource.GetCondition(xpv2.TypeSynced).Message; m != "" {
			msg += ": " + m
		}
		return false, msg, nil
	}
	desired[resourceStretchMode].Ready = resource.ReadyTrue
	tiebreaker, _ := o.Resource.GetString("status.atProvider.tiebreakerMonitor")
	rule, _ := o.Resource.GetString("status.atProvider.rule")
	return true, fmt.Sprintf("Ceph runs in stretch mode: every pool keeps %d replicas in each zone by rule %s; monitor %s in %s is the tiebreaker",
		cephplacement.StretchPerZone, rule, tiebreaker, s.ArbiterCluster), nil
}
