package controller

import (
	"context"
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

func TestFinderCreate(t *testing.T) {
	obj := &struct{ ID string }{ID: "made"}
	cases := map[string]struct {
		err       error
		found     bool
		want      bool
		wantErr   bool
		wantFinds int
	}{
		"a create that answered":                         {want: true},
		"a refusal is passed on, nothing is looked up":   {err: errTest{}, wantErr: true},
		"a lost answer: the object made is found":        {err: context.DeadlineExceeded, found: true, want: true, wantFinds: 1},
		"a lost answer and no object: the error remains": {err: context.DeadlineExceeded, wantErr: true, wantFinds: 1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			finds := 0
			f := Finder[struct{ ID string }]{FindByName: func(ctx context.Context) (*struct{ ID string }, error) {
				finds++
				if ctx.Err() != nil {
					t.Error("the lookup runs with the expired context of the reconcile")
				}
				if tc.found {
					return obj, nil
				}
				return nil, nil
			}}
			// The reconcile's context has expired, as when a loaded cloud answered too late.
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			got, err := f.Create(ctx, &keystonev1alpha1.Project{}, func(context.Context) (*struct{ ID string }, error) {
				if tc.err != nil {
					return nil, tc.err
				}
				return obj, nil
			})
			if (err != nil) != tc.wantErr || (got != nil) != tc.want || finds != tc.wantFinds {
				t.Errorf("Create() = %v, %v after %d lookups; want object %v, error %v, %d lookups", got, err, finds, tc.want, tc.wantErr, tc.wantFinds)
			}
		})
	}
}

// TestCreatedAnswersTheConfirmingObserve: the Observe right after a create
// takes the object the create returned instead of asking the service; the
// one after it asks again; another resource (of another cloud, where the
// same ID names another object) never gets it.
func TestCreatedAnswersTheConfirmingObserve(t *testing.T) {
	type obj struct{ ID, Version string }
	gets := 0
	f := Finder[obj]{
		Get: func(_ context.Context, id string) (*obj, error) {
			gets++
			return &obj{ID: id, Version: "from the service"}, nil
		},
		ID:      func(o *obj) string { return o.ID },
		Created: &Created[obj]{},
	}
	mine := &keystonev1alpha1.Project{ObjectMeta: metav1.ObjectMeta{Name: "mine", UID: "uid-mine"}}
	theirs := &keystonev1alpha1.Project{ObjectMeta: metav1.ObjectMeta{Name: "theirs", UID: "uid-theirs"}}
	ctx := context.Background()
	if _, err := f.Create(ctx, mine, func(context.Context) (*obj, error) { return &obj{ID: "5", Version: "as created"}, nil }); err != nil {
		t.Fatal(err)
	}
	meta.SetExternalName(mine, "5")
	meta.SetExternalName(theirs, "5")

	if got, _, _ := f.Lookup(ctx, theirs); got.Version != "from the service" || gets != 1 {
		t.Errorf("another resource with the same ID got %+v after %d GETs, want the service's object", got, gets)
	}
	if got, _, _ := f.Lookup(ctx, mine); got.Version != "as created" || gets != 1 {
		t.Errorf("the confirming Observe got %+v after %d GETs, want the created object and no GET", got, gets)
	}
	if got, _, _ := f.Lookup(ctx, mine); got.Version != "from the service" || gets != 2 {
		t.Errorf("the next Observe got %+v after %d GETs, want the service's object", got, gets)
	}
	if _, err := f.Create(ctx, mine, func(context.Context) (*obj, error) { return nil, errTest{} }); err == nil {
		t.Fatal("the failed create returned no error")
	}
	if got, _, _ := f.Lookup(ctx, mine); got.Version != "from the service" {
		t.Errorf("a failed create left %+v to answer an Observe", got)
	}
}

// A resource deleted soon after its create: once its Delete succeeded, an
// object not found lets the reconciler finalize it at once (the record of
// the create, which holds it for crossplane-runtime's creation grace
// period, goes); before that, and for a resource not being deleted, the
// record stays.
func TestConfirmGone(t *testing.T) {
	now := metav1.Now()
	cases := map[string]struct {
		deleted   bool
		conds     []xpv2.Condition
		confirmed bool
	}{
		"not deleted":               {conds: []xpv2.Condition{xpv2.Available(), xpv2.ReconcileSuccess()}},
		"deleted, Delete not run":   {deleted: true, conds: []xpv2.Condition{xpv2.Available(), xpv2.ReconcileSuccess()}},
		"deleted, Delete failed":    {deleted: true, conds: []xpv2.Condition{xpv2.Deleting(), xpv2.ReconcileError(errTest{})}},
		"deleted, Delete succeeded": {deleted: true, conds: []xpv2.Condition{xpv2.Deleting(), xpv2.ReconcileSuccess()}, confirmed: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := &keystonev1alpha1.Project{}
			meta.SetExternalName(p, "5")
			meta.SetExternalCreateSucceeded(p, time.Now())
			if tc.deleted {
				p.SetDeletionTimestamp(&now)
			}
			p.SetConditions(tc.conds...)
			ConfirmGone(p)
			if waits := meta.ExternalCreateSucceededDuring(p, time.Minute); waits == tc.confirmed {
				t.Errorf("the create's record kept: %v, want %v", waits, !tc.confirmed)
			}
		})
	}
}
