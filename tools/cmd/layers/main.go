// Command layers writes each kind of cluster's layer as Flux applies it
// (examples/clusters/pools/<kind>, examples/clusters/control-plane): what
// the platform's operators bring into such a cluster (their CRDs from
// cluster/crds, the namespaces they run in) and the node agents' bundle
// (internal/agentbundle, which make generate copies from cluster/agents).
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/c5c3/consumer-plane/internal/agentbundle"
)

// A kind of cluster and what its layer holds.
type kind struct {
	// dir is the layer's path under the GitOps tree's clusters/, the
	// Compositions' input clusterLayers.*Path.
	dir string
	set agentbundle.Set
	// crds are the directories of cluster/crds whose CRDs the functions
	// compose objects of (or the agents write) in such a cluster: in a
	// landscape, each is an operator's, which the platform adds to the
	// layer with the operator itself.
	crds []string
	// only, when set, keeps of those CRDs the ones named: what the
	// functions compose. Rook's 19 CRDs are 830 KB, and each cluster's API
	// server establishes every CRD it is given; the five the storage and
	// cloud functions compose are what the layer needs (a landscape's Rook
	// install brings the rest).
	only []string
	// namespaces the composed objects and the agents live in.
	namespaces []string
}

var kinds = []kind{
	// The hypervisor operator's Hypervisor and Eviction, which the
	// hypervisor and HA agents write (their namespace is the agents' own).
	{dir: "pools/hypervisor", set: agentbundle.Hypervisor, crds: []string{"hypervisor-operator"}},
	// Rook's CephCluster, pools and clients, and the external arbiter
	// operator's RemoteCluster and RemoteArbiter of a stretched pool.
	{dir: "pools/storage", set: agentbundle.Storage, crds: []string{"rook", "arbiter"}, namespaces: []string{"rook-ceph", "arbiter-operator"},
		only: []string{"cephclusters.ceph.rook.io", "cephblockpools.ceph.rook.io", "cephclients.ceph.rook.io",
			"cephfilesystems.ceph.rook.io", "cephobjectstores.ceph.rook.io", // a cloud's CephFS and object store
			"remoteclusters.ceph.cobaltcore.sap.com", "remotearbiters.ceph.cobaltcore.sap.com"}},
	// The c5c3 operator's ControlPlane, one per cloud.
	{dir: "control-plane", set: agentbundle.ControlPlane, crds: []string{"c5c3"}},
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: layers CRDS-DIR CLUSTERS-DIR (each kind's layer is written to CLUSTERS-DIR/<its path>, replacing what is there)")
		os.Exit(2)
	}
	if err := write(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// layers are the files of each kind's layer, by its path, reading the
// operators' CRDs from crdsDir.
func layers(crdsDir string) (map[string]map[string][]byte, error) {
	out := map[string]map[string][]byte{}
	for _, k := range kinds {
		operators := map[string][]byte{}
		for _, d := range k.crds {
			files, err := filepath.Glob(filepath.Join(crdsDir, d, "*.yaml"))
			if err != nil {
				return nil, err
			}
			if len(files) == 0 {
				return nil, fmt.Errorf("no CRDs in %s: run make generate", filepath.Join(crdsDir, d))
			}
			for _, f := range files {
				b, err := os.ReadFile(f) //nolint:gosec // the repository's own files
				if err != nil {
					return nil, err
				}
				if err := addCRDs(operators, filepath.Base(f), b, k.only); err != nil {
					return nil, err
				}
			}
		}
		if len(k.namespaces) > 0 {
			var b strings.Builder
			for _, n := range k.namespaces {
				fmt.Fprintf(&b, "---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n", n)
			}
			operators["namespaces.yaml"] = []byte(b.String())
		}
		files, err := agentbundle.Layer(k.set, operators)
		if err != nil {
			return nil, err
		}
		out[k.dir] = files
	}
	return out, nil
}

// addCRDs adds the CRDs of file (one or more YAML documents) to files: the
// file as it is when only is empty, else each CRD named in only as a file
// of its own, <group>_<plural>.yaml.
func addCRDs(files map[string][]byte, file string, b []byte, only []string) error {
	if len(only) == 0 {
		files[file] = b
		return nil
	}
	for _, doc := range strings.Split(string(b), "\n---\n") {
		var crd struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(doc), &crd); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		name := crd.Metadata.Name
		if !slices.Contains(only, name) {
			continue
		}
		plural, group, _ := strings.Cut(name, ".")
		files[group+"_"+plural+".yaml"] = []byte(strings.TrimSuffix(strings.TrimPrefix(doc, "---\n"), "\n") + "\n")
	}
	return nil
}

func write(crdsDir, dir string) error {
	all, err := layers(crdsDir)
	if err != nil {
		return err
	}
	for path, files := range all {
		d := filepath.Join(dir, path)
		if err := os.RemoveAll(d); err != nil {
			return err
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		for name, b := range files {
			if err := os.WriteFile(filepath.Join(d, name), b, 0o644); err != nil { //nolint:gosec // a Git tree's files
				return err
			}
		}
	}
	return nil
}
