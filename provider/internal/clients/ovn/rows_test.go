package ovn

import (
	"maps"
	"testing"

	"github.com/c5c3/consumer-plane/apis/ovn/v1alpha1"
)

func TestOwner(t *testing.T) {
	ours := map[string]string{v1alpha1.ExternalIDManagedBy: v1alpha1.ManagedByValue, v1alpha1.ExternalIDResource: "mr-a"}
	cases := map[string]struct {
		ext  map[string]string
		want Ownership
	}{
		"this resource's":        {ours, OwnedByResource},
		"another resource's":     {map[string]string{v1alpha1.ExternalIDManagedBy: v1alpha1.ManagedByValue, v1alpha1.ExternalIDResource: "mr-b"}, OwnedByOtherResource},
		"neutron's":              {map[string]string{"neutron:network_name": "x"}, OwnedByNeutron},
		"neutron's, even marked": {map[string]string{"neutron:network_name": "x", v1alpha1.ExternalIDManagedBy: v1alpha1.ManagedByValue, v1alpha1.ExternalIDResource: "mr-a"}, OwnedByNeutron},
		"hand-made":              {map[string]string{"purpose": "x"}, Unowned},
		"no external_ids":        {nil, Unowned},
	}
	for name, tc := range cases {
		if got := Owner(tc.ext, "mr-a"); got != tc.want {
			t.Errorf("%s: Owner = %d, want %d", name, got, tc.want)
		}
	}
}

// TestMerge: the spec's keys are set, keys the provider set before and the
// spec dropped are removed, everyone else's stay.
func TestMerge(t *testing.T) {
	observed := map[string]string{"subnet": "10.0.0.0/24", "mcast_snoop": "true", "foreign": "kept"}
	ext := map[string]string{}
	SetOwnedKeys(ext, "other_config", "mcast_snoop,subnet")
	merged, record := Merge("other_config", observed, map[string]string{"subnet": "10.1.0.0/24"}, ext)
	if want := map[string]string{"subnet": "10.1.0.0/24", "foreign": "kept"}; !maps.Equal(merged, want) {
		t.Errorf("merged %v, want %v", merged, want)
	}
	if record != "subnet" {
		t.Errorf("record %q", record)
	}
	if observed["mcast_snoop"] != "true" {
		t.Error("Merge changed the observed map")
	}
	// Nothing desired: the record goes too.
	merged, record = Merge("other_config", observed, nil, ext)
	SetOwnedKeys(ext, "other_config", record)
	if _, ok := merged["subnet"]; ok || merged["foreign"] != "kept" || len(OwnedKeys("other_config", ext)) != 0 {
		t.Errorf("merged %v, record %v", merged, ext)
	}
}

func TestRowExternalIDs(t *testing.T) {
	observed := map[string]string{"purpose": "old", "other-tool": "x"}
	SetOwnedKeys(observed, "external_ids", "purpose")
	got := RowExternalIDs(observed, map[string]string{"team": "net"}, "mr-a")
	if got["purpose"] != "" || got["other-tool"] != "x" || got["team"] != "net" ||
		got[v1alpha1.ExternalIDResource] != "mr-a" || got[v1alpha1.ExternalIDManagedBy] != v1alpha1.ManagedByValue {
		t.Errorf("external_ids %v", got)
	}
	if Owner(got, "mr-a") != OwnedByResource {
		t.Error("a row with RowExternalIDs is not owned by its resource")
	}
}
