package controller

import (
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	keystonev1alpha1 "github.com/c5c3/consumer-plane/apis/keystone/v1alpha1"
)

func TestDesiredStateChanged(t *testing.T) {
	project := func(generation int64, annotations, labels map[string]string) *keystonev1alpha1.Project {
		return &keystonev1alpha1.Project{ObjectMeta: metav1.ObjectMeta{Name: "p", Generation: generation, Annotations: annotations, Labels: labels}}
	}
	created := map[string]string{meta.AnnotationKeyExternalCreateSucceeded: "2026-11-25T06:00:00Z", meta.AnnotationKeyExternalName: "0a1b"}
	cases := map[string]struct {
		old, new *keystonev1alpha1.Project
		want     bool
	}{
		"the reconciler records its create": {project(1, nil, nil), project(1, created, nil), false},
		"a create recorded again (a second create after the external object was deleted)": {
			project(1, created, nil),
			project(1, map[string]string{meta.AnnotationKeyExternalCreateSucceeded: "2026-11-25T07:00:00Z", meta.AnnotationKeyExternalName: "0c2d"}, nil), false,
		},
		"the spec changed":                      {project(1, created, nil), project(2, created, nil), true},
		"someone sets the external name":        {project(1, created, nil), project(1, map[string]string{meta.AnnotationKeyExternalCreateSucceeded: created[meta.AnnotationKeyExternalCreateSucceeded], meta.AnnotationKeyExternalName: "9f"}, nil), true},
		"a label changed":                       {project(1, created, nil), project(1, created, map[string]string{"team": "a"}), true},
		"the create is pending (already quiet)": {project(1, nil, nil), project(1, map[string]string{meta.AnnotationKeyExternalCreatePending: "x"}, nil), false},
		"only the status changed":               {project(1, created, nil), project(1, created, nil), false},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if got := DesiredStateChanged().Update(event.UpdateEvent{ObjectOld: c.old, ObjectNew: c.new}); got != c.want {
				t.Errorf("Update: got %t, want %t", got, c.want)
			}
		})
	}
	if !DesiredStateChanged().Create(event.CreateEvent{Object: project(1, nil, nil)}) {
		t.Error("a new managed resource must be reconciled")
	}
}
