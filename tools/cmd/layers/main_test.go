package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestLayersAreCurrent: examples/clusters holds each kind's layer as layers
// makes it (make generate writes it; check-generate keeps it equal), and
// nothing else.
func TestLayersAreCurrent(t *testing.T) {
	all, err := layers(filepath.Join("..", "..", "..", "cluster", "crds"))
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range all {
		dir := filepath.Join("..", "..", "..", "examples", "clusters", path)
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != len(want) {
			t.Errorf("%s has %d files, want %d: run make generate", dir, len(entries), len(want))
		}
		for name, b := range want {
			got, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil || string(got) != string(b) {
				t.Errorf("%s/%s is not the layer's: run make generate (%v)", dir, name, err)
			}
		}
	}
}

// TestLayersHoldWhatTheFunctionsCompose: each kind's layer carries the
// CRDs of what the functions compose into such a cluster, and the
// namespaces they compose it in, so that no cluster needs them preloaded.
func TestLayersHoldWhatTheFunctionsCompose(t *testing.T) {
	all, err := layers(filepath.Join("..", "..", "..", "cluster", "crds"))
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string][]string{
		"pools/hypervisor": {"name: hypervisors.kvm.cloud.sap", "name: ovsnodes.ovs.c5c3.io", "name: c5c3-agents"},
		"pools/storage": {"name: cephclusters.ceph.rook.io", "name: cephblockpools.ceph.rook.io", "name: cephclients.ceph.rook.io",
			"name: cephfilesystems.ceph.rook.io", "name: cephobjectstores.ceph.rook.io",
			"name: remotearbiters.ceph.cobaltcore.sap.com", "name: remoteclusters.ceph.cobaltcore.sap.com", "name: cephstatuses.storage.c5c3.io", "name: rook-ceph\n", "name: arbiter-operator\n"},
		"control-plane": {"name: controlplanes.c5c3.io"},
	} {
		var text strings.Builder
		for _, b := range all[path] {
			text.Write(b)
		}
		for _, w := range want {
			if !strings.Contains(text.String(), w) {
				t.Errorf("the %s layer lacks %q", path, strings.TrimSpace(w))
			}
		}
	}
	// Only what the functions compose of Rook's: each CRD a cluster's API
	// server is given costs it the CRD's establishment.
	for name := range all["pools/storage"] {
		composed := []string{"cephclusters", "cephblockpools", "cephclients", "cephfilesystems", "cephobjectstores"}
		if plural, ok := strings.CutPrefix(strings.TrimSuffix(name, ".yaml"), "ceph.rook.io_"); ok && !slices.Contains(composed, plural) {
			t.Errorf("the storage layer carries %s, which no function composes", name)
		}
	}
}
