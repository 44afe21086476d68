package v1alpha1

import (
	"context"
	"fmt"
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
