package volumetype

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/c5c3/consumer-plane/apis/cinder/v1alpha1"
)

func TestDesiredSpecs(t *testing.T) {
	got := desiredSpecs(v1alpha1.VolumeTypeParameters{BackendName: "ceph-a", ExtraSpecs: map[string]string{"tier": "gold"}})
	want := map[string]string{"tier": "gold", "volume_backend_name": "ceph-a"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("desiredSpecs(): -want +got:\n%s", diff)
	}
}

func TestSpecChanges(t *testing.T) {
	cases := map[string]struct {
		desired, observed map[string]string
		set               map[string]string
		del               []string
	}{
		"in sync":               {desired: map[string]string{"a": "1"}, observed: map[string]string{"a": "1"}, set: map[string]string{}},
		"backend moved by hand": {desired: map[string]string{"volume_backend_name": "a"}, observed: map[string]string{"volume_backend_name": "b"}, set: map[string]string{"volume_backend_name": "a"}},
		"foreign spec removed":  {desired: map[string]string{}, observed: map[string]string{"x": "1", "w": "2"}, set: map[string]string{}, del: []string{"w", "x"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			set, del := specChanges(tc.desired, tc.observed)
			if diff := cmp.Diff(tc.set, set); diff != "" {
				t.Errorf("set: -want +got:\n%s", diff)
			}
			if diff := cmp.Diff(tc.del, del, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("del: -want +got:\n%s", diff)
			}
		})
	}
}
