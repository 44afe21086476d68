package aggregate

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/c5c3/consumer-plane/apis/nova/v1alpha1"
)

func TestDesiredMetadata(t *testing.T) {
	cases := map[string]struct {
		p    v1alpha1.AggregateParameters
		want map[string]string
	}{
		"no tenants":                 {p: v1alpha1.AggregateParameters{Metadata: map[string]string{"pool": "a"}}, want: map[string]string{"pool": "a"}},
		"tenants are sorted, joined": {p: v1alpha1.AggregateParameters{FilterTenantIDs: []string{"p2", "p1"}}, want: map[string]string{"filter_tenant_id": "p1,p2"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, desiredMetadata(tc.p)); diff != "" {
				t.Errorf("desiredMetadata(): -want +got:\n%s", diff)
			}
		})
	}
}

func TestMetadataChanges(t *testing.T) {
	cases := map[string]struct {
		desired, observed map[string]string
		want              map[string]any
	}{
		"in sync":                 {desired: map[string]string{"a": "1"}, observed: map[string]string{"a": "1"}, want: map[string]any{}},
		"changed and added":       {desired: map[string]string{"a": "2", "b": "x"}, observed: map[string]string{"a": "1"}, want: map[string]any{"a": "2", "b": "x"}},
		"foreign key removed":     {desired: map[string]string{}, observed: map[string]string{"by-hand": "x"}, want: map[string]any{"by-hand": nil}},
		"Nova's zone key is kept": {desired: map[string]string{}, observed: map[string]string{"availability_zone": "az1"}, want: map[string]any{}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, metadataChanges(tc.desired, tc.observed)); diff != "" {
				t.Errorf("metadataChanges(): -want +got:\n%s", diff)
			}
		})
	}
}

func TestHostChanges(t *testing.T) {
	cases := map[string]struct {
		desired, observed, add, remove []string
	}{
		"empty leaves hosts to the hypervisor operator": {observed: []string{"hv-1"}},
		"add and remove": {desired: []string{"hv-1", "hv-3"}, observed: []string{"hv-1", "hv-2"}, add: []string{"hv-3"}, remove: []string{"hv-2"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			add, remove := hostChanges(tc.desired, tc.observed)
			if diff := cmp.Diff(tc.add, add); diff != "" {
				t.Errorf("add: -want +got:\n%s", diff)
			}
			if diff := cmp.Diff(tc.remove, remove); diff != "" {
				t.Errorf("remove: -want +got:\n%s", diff)
			}
		})
	}
}

func TestAggregateID(t *testing.T) {
	if n, err := aggregateID("42"); err != nil || n != 42 {
		t.Errorf("aggregateID(42) = %d, %v", n, err)
	}
	if _, err := aggregateID("not-a-number"); err == nil {
		t.Error("aggregateID(not-a-number): want a terminal error")
	}
}
