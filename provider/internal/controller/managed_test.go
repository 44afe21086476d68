package controller

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	xpevent "github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

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

// TestPollWhileWaiting: a resource not Ready is observed again within
// seconds of its last change, less often as it keeps waiting, and a Ready
// one at the poll interval.
func TestPollWhileWaiting(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	project := func(created time.Time, conds ...xpv2.Condition) *keystonev1alpha1.Project {
		p := &keystonev1alpha1.Project{ObjectMeta: metav1.ObjectMeta{Name: "p", CreationTimestamp: metav1.NewTime(created)}}
		p.SetConditions(conds...)
		return p
	}
	at := func(c xpv2.Condition, t time.Time) xpv2.Condition {
		c.LastTransitionTime = metav1.NewTime(t)
		return c
	}
	cases := map[string]struct {
		mg   *keystonev1alpha1.Project
		want time.Duration
	}{
		"just created":                   {project(now.Add(-time.Second)), 2 * time.Second},
		"waiting 40 s since it changed":  {project(now.Add(-time.Hour), at(xpv2.Unavailable(), now.Add(-40*time.Second))), 10 * time.Second},
		"synced again 8 s ago":           {project(now.Add(-time.Hour), at(xpv2.Creating(), now.Add(-time.Hour)), at(xpv2.ReconcileSuccess(), now.Add(-8*time.Second))), 2 * time.Second},
		"waiting an hour":                {project(now.Add(-2*time.Hour), at(xpv2.Creating(), now.Add(-time.Hour))), time.Minute},
		"ready a moment ago: poll again": {project(now.Add(-time.Hour), at(xpv2.Available(), now.Add(-time.Second))), time.Minute},
	}
	hook := PollWhileWaiting(func() time.Time { return now })
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := hook(tc.mg, time.Minute); got != tc.want {
				t.Errorf("next observe after %v, want %v", got, tc.want)
			}
		})
	}
}

// TestProgressRecorderForgetsTheBackoff: a create or delete recorded by the
// managed reconciler forgets the resource's earlier failures, so its next
// look comes after the base delay; any other event keeps them.
func TestProgressRecorderForgetsTheBackoff(t *testing.T) {
	for _, reason := range []xpevent.Reason{reasonCreated, reasonDeleted} {
		t.Run(string(reason), func(t *testing.T) {
			limiter := ratelimiter.NewController()
			req := reconcile.Request{NamespacedName: types.NamespacedName{Name: "p"}}
			// Five failures while its references were not resolvable: the
			// next requeue would wait 32 s.
			for range 5 {
				limiter.When(req)
			}
			r := progressRecorder{Recorder: xpevent.NewNopRecorder(), limiter: limiter}
			p := &keystonev1alpha1.Project{ObjectMeta: metav1.ObjectMeta{Name: "p"}}
			r.Event(p, xpevent.Warning("CannotResolveResourceReferences", errors.New("the project has no ID yet")))
			if n := limiter.NumRequeues(req); n != 5 {
				t.Fatalf("after a failure's event the backoff counts %d failures, want 5", n)
			}
			r.WithAnnotations("external-name", "0a1b").Event(p, xpevent.Normal(reason, "done"))
			if d := limiter.When(req); d != time.Second {
				t.Errorf("after %s the next look waits %v, want the base delay 1s", reason, d)
			}
		})
	}
}

// TestProgressReasonsAreCrossplaneRuntimes: the reasons progressRecorder
// reacts to are those the managed reconciler of the crossplane-runtime in
// go.mod records (they are unexported there).
func TestProgressReasonsAreCrossplaneRuntimes(t *testing.T) {
	dir, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/crossplane/crossplane-runtime/v2").Output()
	if err != nil {
		t.Fatalf("go list -m crossplane-runtime: %v", err)
	}
	src, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(dir)), "pkg/reconciler/managed/reconciler.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []xpevent.Reason{reasonCreated, reasonDeleted} {
		if !strings.Contains(string(src), `event.Reason = "`+string(r)+`"`) {
			t.Errorf("crossplane-runtime's managed reconciler records no reason %q", r)
		}
	}
}

// listOptions records the options of the lists it is asked for.
type listOptions struct {
	client.Client
	got client.ListOptions
}

func (l *listOptions) List(_ context.Context, _ client.ObjectList, opts ...client.ListOption) error {
	l.got = client.ListOptions{}
	l.got.ApplyOptions(opts)
	return nil
}

// TestStateMetricsListWithoutCopies: the state metrics' lists of every
// managed resource ask the cache for its objects uncopied, and keep the
// caller's options.
func TestStateMetricsListWithoutCopies(t *testing.T) {
	rec := &listOptions{}
	if err := (uncopiedLists{rec}).List(context.Background(), &keystonev1alpha1.ProjectList{}, client.InNamespace("ns")); err != nil {
		t.Fatal(err)
	}
	if rec.got.UnsafeDisableDeepCopy == nil || !*rec.got.UnsafeDisableDeepCopy {
		t.Error("the list asked for copies of the cache's objects, want none")
	}
	if rec.got.Namespace != "ns" {
		t.Errorf("the list's namespace = %q, want the caller's %q", rec.got.Namespace, "ns")
	}
}
