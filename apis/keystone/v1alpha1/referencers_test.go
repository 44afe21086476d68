package v1alpha1

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// TestReferencesResolveConcurrently: reconciles resolve their references
// at once, as a provider's workers do; each must get the ID of the object
// it names. With one object shared by every resolution, a cloud's QuotaSet
// got another cloud's project ID (bench-scale, 1,000 clouds).
func TestReferencesResolveConcurrently(t *testing.T) {
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	const clouds = 16
	var objs []client.Object
	for i := range clouds {
		p := &Project{}
		p.SetName(fmt.Sprintf("c%02d", i))
		meta.SetExternalName(p, fmt.Sprintf("project-of-c%02d", i))
		u := &User{}
		u.SetName(fmt.Sprintf("c%02d-tenant", i))
		meta.SetExternalName(u, fmt.Sprintf("user-of-c%02d", i))
		objs = append(objs, p, u)
	}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).Build()

	var wg sync.WaitGroup
	errs := make(chan error, clouds*50)
	for i := range clouds {
		for range 50 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p := ProjectIDReference{ProjectIDRef: &xpv2.Reference{Name: fmt.Sprintf("c%02d", i)}}
				u := UserIDReference{UserIDRef: &xpv2.Reference{Name: fmt.Sprintf("c%02d-tenant", i)}}
				mg := &RoleAssignment{}
				if err := p.Resolve(context.Background(), c, mg, "spec.forProvider.projectIDRef"); err != nil {
					errs <- err
					return
				}
				if err := u.Resolve(context.Background(), c, mg, "spec.forProvider.userIDRef"); err != nil {
					errs <- err
					return
				}
				if want := fmt.Sprintf("project-of-c%02d", i); p.ProjectID != want {
					errs <- fmt.Errorf("c%02d's project reference resolved to %q, want %q", i, p.ProjectID, want)
				}
				if want := fmt.Sprintf("user-of-c%02d", i); u.UserID != want {
					errs <- fmt.Errorf("c%02d's user reference resolved to %q, want %q", i, u.UserID, want)
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	n := 0
	for err := range errs {
		if n++; n <= 3 {
			t.Error(err)
		}
	}
	if n > 3 {
		t.Errorf("… and %d more", n-3)
	}
}

// TestResolvedIDsFollowTheirReferences: an ID resolved wrong (as the race
// above left some) or whose Project was made again under a new ID is
// resolved again from its reference by name; an ID given without a
// reference, and one of an Optional reference, are kept.
func TestResolvedIDsFollowTheirReferences(t *testing.T) {
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	own, other := &Project{}, &Project{}
	own.SetName("own")
	meta.SetExternalName(own, "id-of-own")
	other.SetName("other")
	meta.SetExternalName(other, "id-of-other")
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(own, other).Build()
	ctx := context.Background()
	optional := xpv2.ResolutionPolicyOptional

	one := map[string]struct {
		ref  ProjectIDReference
		want string
	}{
		"a wrong ID follows its reference": {
			ref:  ProjectIDReference{ProjectID: "id-of-other", ProjectIDRef: &xpv2.Reference{Name: "own"}},
			want: "id-of-own",
		},
		"an empty ID is resolved": {
			ref:  ProjectIDReference{ProjectIDRef: &xpv2.Reference{Name: "own"}},
			want: "id-of-own",
		},
		"an ID without a reference is kept": {
			ref:  ProjectIDReference{ProjectID: "given"},
			want: "given",
		},
		"an Optional reference keeps its ID": {
			ref:  ProjectIDReference{ProjectID: "kept", ProjectIDRef: &xpv2.Reference{Name: "gone", Policy: &xpv2.Policy{Resolution: &optional}}},
			want: "kept",
		},
	}
	for name, tc := range one {
		t.Run(name, func(t *testing.T) {
			r := tc.ref
			if err := r.Resolve(ctx, c, &RoleAssignment{}, "spec.forProvider.projectIDRef"); err != nil {
				t.Fatal(err)
			}
			if r.ProjectID != tc.want {
				t.Errorf("ProjectID = %q, want %q", r.ProjectID, tc.want)
			}
			if (r.ProjectIDRef == nil) != (tc.ref.ProjectIDRef == nil) {
				t.Errorf("the reference changed: %v, was %v", r.ProjectIDRef, tc.ref.ProjectIDRef)
			}
		})
	}

	many := map[string]struct {
		ids  []string
		refs []xpv2.Reference
		want []string
	}{
		"wrong IDs follow their references": {
			ids: []string{"id-of-other"}, refs: []xpv2.Reference{{Name: "own"}}, want: []string{"id-of-own"},
		},
		"IDs without references are kept": {
			ids: []string{"a", "b"}, want: []string{"a", "b"},
		},
		"IDs beside an Optional reference are kept": {
			ids: []string{"kept"}, refs: []xpv2.Reference{{Name: "own"}, {Name: "gone", Policy: &xpv2.Policy{Resolution: &optional}}}, want: []string{"kept"},
		},
	}
	for name, tc := range many {
		t.Run(name, func(t *testing.T) {
			got, _, err := ResolveProjectIDs(ctx, c, &RoleAssignment{}, tc.ids, tc.refs, "spec.forProvider.filterTenantIDRefs")
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("IDs = %v, want %v", got, tc.want)
			}
		})
	}

	t.Run("a reference to a missing Project fails and names its field", func(t *testing.T) {
		r := ProjectIDReference{ProjectID: "id-of-own", ProjectIDRef: &xpv2.Reference{Name: "gone"}}
		err := r.Resolve(ctx, c, &RoleAssignment{}, "spec.forProvider.projectIDRef")
		if err == nil || !strings.Contains(err.Error(), "spec.forProvider.projectIDRef") {
			t.Errorf("err = %v, want one naming spec.forProvider.projectIDRef", err)
		}
	})
}
