package controller

import (
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	keystonev1alpha1 "github.com/c5c3/consumer-plane/apis/keystone/v1alpha1"
)

func TestMayAdopt(t *testing.T) {
	cases := map[string]struct {
		prepare func(p *keystonev1alpha1.Project)
		want    bool
	}{
		"a new resource does not adopt": {prepare: func(*keystonev1alpha1.Project) {}},
		"an interrupted create adopts":  {prepare: func(p *keystonev1alpha1.Project) { meta.SetExternalCreatePending(p, time.Now()) }, want: true},
		"a finished create does not": {prepare: func(p *keystonev1alpha1.Project) {
			meta.SetExternalCreatePending(p, time.Now().Add(-time.Minute))
			meta.SetExternalCreateSucceeded(p, time.Now())
		}},
		"Observe-only imports": {prepare: func(p *keystonev1alpha1.Project) {
			p.SetManagementPolicies(xpv2.ManagementPolicies{xpv2.ManagementActionObserve})
		}, want: true},
		"policies that create do not": {prepare: func(p *keystonev1alpha1.Project) {
			p.SetManagementPolicies(xpv2.ManagementPolicies{xpv2.ManagementActionObserve, xpv2.ManagementActionCreate})
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := &keystonev1alpha1.Project{}
			tc.prepare(p)
			if got := MayAdopt(p); got != tc.want {
				t.Errorf("MayAdopt() = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestDeletionDone(t *testing.T) {
	now := metav1.Now()
	cases := map[string]struct {
		deleted bool
		conds   []xpv2.Condition
		want    bool
	}{
		"not deleted":        {conds: []xpv2.Condition{xpv2.Deleting(), xpv2.ReconcileSuccess()}},
		"Delete not yet run": {deleted: true, conds: []xpv2.Condition{xpv2.Available(), xpv2.ReconcileSuccess()}},
		"Delete failed":      {deleted: true, conds: []xpv2.Condition{xpv2.Deleting(), xpv2.ReconcileError(errTest{})}},
		"Delete succeeded":   {deleted: true, conds: []xpv2.Condition{xpv2.Deleting(), xpv2.ReconcileSuccess()}, want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := &keystonev1alpha1.Project{}
			if tc.deleted {
				p.SetDeletionTimestamp(&now)
			}
			p.SetConditions(tc.conds...)
			if got := DeletionDone(p); got != tc.want {
				t.Errorf("DeletionDone() = %v, want %v", got, tc.want)
			}
		})
	}
}

type errTest struct{}

func (errTest) Error() string { return "boom" }
