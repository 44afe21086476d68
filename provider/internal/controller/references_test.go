package controller

import (
	"slices"
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	cinderv1alpha1 "github.com/c5c3/consumer-plane/apis/cinder/v1alpha1"
	keystonev1alpha1 "github.com/c5c3/consumer-plane/apis/keystone/v1alpha1"
	novav1alpha1 "github.com/c5c3/consumer-plane/apis/nova/v1alpha1"
)

func TestUnblocking(t *testing.T) {
	project := func(externalName string, ready *xpv2.Condition, labels map[string]string) *keystonev1alpha1.Project {
		p := &keystonev1alpha1.Project{ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: labels}}
		if externalName != "" {
			meta.SetExternalName(p, externalName)
		}
		if ready != nil {
			p.SetConditions(*ready)
		}
		return p
	}
	available, unavailable := xpv2.Available(), xpv2.Unavailable()
	cases := map[string]struct {
		old, new *keystonev1alpha1.Project
		want     bool
	}{
		"created in the cloud: its ID recorded": {project("", nil, nil), project("0a1b", nil, nil), true},
		"its ID changed (created again)":        {project("0a1b", &available, nil), project("9f", &available, nil), true},
		"it turned Ready":                       {project("0a1b", nil, nil), project("0a1b", &available, nil), true},
		"it was found gone":                     {project("0a1b", &available, nil), project("0a1b", &unavailable, nil), true},
		"a label changed":                       {project("0a1b", &available, nil), project("0a1b", &available, map[string]string{"team": "a"}), false},
		"observed again, nothing changed":       {project("0a1b", &available, nil), project("0a1b", &available, nil), false},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Unblocking().Update(event.UpdateEvent{ObjectOld: c.old, ObjectNew: c.new}); got != c.want {
				t.Errorf("Update: got %t, want %t", got, c.want)
			}
		})
	}
	if Unblocking().Create(event.CreateEvent{Object: project("0a1b", nil, nil)}) {
		t.Error("a creation woke the referrers: at the provider's start every resource would wake every referrer")
	}
}

func TestReferenced(t *testing.T) {
	ref := func(names ...string) []xpv2.Reference {
		out := []xpv2.Reference{}
		for _, n := range names {
			out = append(out, xpv2.Reference{Name: n})
		}
		return out
	}
	project := keystonev1alpha1.ProjectIDReference{ProjectIDRef: &xpv2.Reference{Name: "p"}}
	user := keystonev1alpha1.UserIDReference{UserIDRef: &xpv2.Reference{Name: "u"}}
	cases := map[string]struct {
		mg   Referencing
		want []string
	}{
		"a quota set names its project": {&cinderv1alpha1.QuotaSet{Spec: cinderv1alpha1.QuotaSetSpec{ForProvider: cinderv1alpha1.QuotaSetParameters{ProjectIDReference: project}}},
			[]string{"Project.keystone.provider.c5c3.io/p"}},
		"a quota set with a project ID names nothing": {&novav1alpha1.QuotaSet{Spec: novav1alpha1.QuotaSetSpec{ForProvider: novav1alpha1.QuotaSetParameters{
			ProjectIDReference: keystonev1alpha1.ProjectIDReference{ProjectID: "0a1b"}}}}, nil},
		"a selector names nothing until it is resolved": {&novav1alpha1.QuotaSet{Spec: novav1alpha1.QuotaSetSpec{ForProvider: novav1alpha1.QuotaSetParameters{
			ProjectIDReference: keystonev1alpha1.ProjectIDReference{ProjectIDSelector: &xpv2.Selector{MatchLabels: map[string]string{"a": "b"}}}}}}, nil},
		"an aggregate names each project it is limited to": {&novav1alpha1.Aggregate{Spec: novav1alpha1.AggregateSpec{ForProvider: novav1alpha1.AggregateParameters{FilterTenantIDRefs: ref("p", "q")}}},
			[]string{"Project.keystone.provider.c5c3.io/p", "Project.keystone.provider.c5c3.io/q"}},
		"a volume type names the projects granted it": {&cinderv1alpha1.VolumeType{Spec: cinderv1alpha1.VolumeTypeSpec{ForProvider: cinderv1alpha1.VolumeTypeParameters{AccessProjectIDRefs: ref("p")}}},
			[]string{"Project.keystone.provider.c5c3.io/p"}},
		"a grant names its user and project": {&keystonev1alpha1.RoleAssignment{Spec: keystonev1alpha1.RoleAssignmentSpec{ForProvider: keystonev1alpha1.RoleAssignmentParameters{
			UserIDReference: user, ProjectIDReference: project}}}, []string{"User.keystone.provider.c5c3.io/u", "Project.keystone.provider.c5c3.io/p"}},
		"a credential names its user and project": {&keystonev1alpha1.ApplicationCredential{Spec: keystonev1alpha1.ApplicationCredentialSpec{ForProvider: keystonev1alpha1.ApplicationCredentialParameters{
			UserIDReference: user, ProjectIDReference: project}}}, []string{"User.keystone.provider.c5c3.io/u", "Project.keystone.provider.c5c3.io/p"}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, r := range c.mg.Referenced() {
				got = append(got, referenceKey(r))
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("Referenced: got %q, want %q", got, c.want)
			}
		})
	}
}

// TestResolvesWithWakes: a kind that resolves references is set up with
// the kinds that wake it, and only a kind that lists its references is
// given any; every managed kind of the provider passes (the setup of each
// is in register.All, which the integration tests start).
func TestResolvesWithWakes(t *testing.T) {
	wakes := []Wake{{Object: &keystonev1alpha1.Project{}}}
	cases := map[string]struct {
		mg    resource.Managed
		wakes []Wake
		ok    bool
	}{
		"a QuotaSet with its Project's wake": {&cinderv1alpha1.QuotaSet{}, wakes, true},
		"a QuotaSet without":                 {&cinderv1alpha1.QuotaSet{}, nil, false},
		"a Project, which references none":   {&keystonev1alpha1.Project{}, nil, true},
		"a Project given wakes":              {&keystonev1alpha1.Project{}, wakes, false},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if err := resolvesWithWakes(c.mg, c.wakes); (err == nil) != c.ok {
				t.Errorf("resolvesWithWakes: got %v, want ok %t", err, c.ok)
			}
		})
	}
}

// The wake sources list referrers into a list of their own: the
// controller's list is the state metrics recorder's, which lists into it
// concurrently, so reading it (a deep copy) raced and crashed the provider.
func TestNewOfReadsNothingOfTheSharedList(t *testing.T) {
	shared := &keystonev1alpha1.ProjectList{Items: make([]keystonev1alpha1.Project, 600)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 1000 {
			shared.Items = append(shared.Items[:0], make([]keystonev1alpha1.Project, 600)...)
		}
	}()
	for range 1000 {
		var list client.ObjectList = shared
		l, ok := newOf(list).(*keystonev1alpha1.ProjectList)
		if !ok || l == shared || len(l.Items) != 0 {
			t.Fatalf("newOf returned %T with %d items (the shared list: %t), want a new empty ProjectList", l, len(l.Items), l == shared)
		}
	}
	<-done
}
