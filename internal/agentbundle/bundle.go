// Package agentbundle is the node agents' companion package: the manifests
// of cluster/agents and the agents' CRDs (cluster/crds/agents), copied here
// by `make generate` and embedded. It makes each kind of cluster's layer
// (Layer, which `make generate` writes to examples/clusters for Flux, with
// the operators' CRDs beside the agents) and the image overrides with which a pool function's release runs its own
// agents from that layer (Overrides).
package agentbundle

import (
	"embed"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/yaml"
)

//go:embed manifests/*.yaml
var manifests embed.FS

// Version is the release the functions were built as (tools/packaging/build.sh
// sets it with -ldflags -X); the agents' images are tagged with it.
var Version = "v0.1.0-dev"

// DefaultRegistry is where the agents' images are published.
const DefaultRegistry = "xpkg.c5c3.io/cobaltcore"

// Images says where the agents' images are pulled from; empty fields take
// DefaultRegistry and Version.
type Images struct {
	Registry, Tag string
}

// ref is an agent's image reference: <registry>/<agent>:<tag>, the agent
// being the last path element of the manifest's image name.
func (i Images) ref(image string) string {
	name, _, _ := strings.Cut(image[strings.LastIndex(image, "/")+1:], ":")
	reg, tag := i.Registry, i.Tag
	if reg == "" {
		reg = DefaultRegistry
	}
	if tag == "" {
		tag = Version
	}
	return reg + "/" + name + ":" + tag
}

// Set is the agents a kind of pool runs.
type Set string

// The sets.
const (
	// Hypervisor pools run the hypervisor, HA and OVS agents, with the
	// admission policy that keeps each to its own node and the OVSNode CRD.
	// (The Hypervisor and Eviction CRDs are the hypervisor operator's.)
	Hypervisor Set = "hypervisor"
	// Storage pools run the storage agent beside Rook, with the CephStatus CRD.
	Storage Set = "storage"
	// ControlPlane clusters run no node agent: their layer is what the
	// platform's operators bring (Layer's operators).
	ControlPlane Set = "control-plane"
)

var files = map[Set][]string{
	Hypervisor:   {"namespace.yaml", "ovs.c5c3.io_ovsnodes.yaml", "node-restriction.yaml", "hypervisor-agent.yaml", "ha-agent.yaml", "ovs-agent.yaml"},
	Storage:      {"storage.c5c3.io_cephstatuses.yaml", "storage-agent.yaml"},
	ControlPlane: {},
}

// Manifest is one object of the bundle.
type Manifest struct {
	// Name is unique within the bundle and safe in object names:
	// <kind>-<name>, lower case, ':' as '-'.
	Name   string
	Object map[string]any
}

// Objects returns the set's objects in the order of its files, their
// containers' images pulled as images says.
func Objects(set Set, images Images) ([]Manifest, error) {
	out, err := load(set)
	if err != nil {
		return nil, err
	}
	for _, m := range out {
		for _, c := range containers(m.Object) {
			if img, ok := c["image"].(string); ok && img != "" {
				c["image"] = images.ref(img)
			}
		}
	}
	return out, nil
}

// load decodes the set's manifests as the files have them.
func load(set Set) ([]Manifest, error) {
	names, err := filesOf(set)
	if err != nil {
		return nil, err
	}
	var out []Manifest
	for _, f := range names {
		r, err := manifests.Open("manifests/" + f)
		if err != nil {
			return nil, err
		}
		dec := yaml.NewYAMLOrJSONDecoder(r, 4096)
		for {
			obj := map[string]any{}
			if err := dec.Decode(&obj); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				_ = r.Close()
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			if len(obj) == 0 {
				continue
			}
			kind, _ := obj["kind"].(string)
			meta, _ := obj["metadata"].(map[string]any)
			name, _ := meta["name"].(string)
			if kind == "" || name == "" {
				_ = r.Close()
				return nil, fmt.Errorf("%s: an object without kind or name", f)
			}
			out = append(out, Manifest{Name: strings.ToLower(kind + "-" + strings.NewReplacer(":", "-", ".", "-").Replace(name)), Object: obj})
		}
		_ = r.Close()
	}
	return out, nil
}

// containers are a workload's init and app containers.
func containers(obj map[string]any) []map[string]any {
	spec, _ := obj["spec"].(map[string]any)
	tmpl, _ := spec["template"].(map[string]any)
	pod, _ := tmpl["spec"].(map[string]any)
	var out []map[string]any
	for _, key := range []string{"initContainers", "containers"} {
		cs, _ := pod[key].([]any)
		for _, c := range cs {
			if c, ok := c.(map[string]any); ok {
				out = append(out, c)
			}
		}
	}
	return out
}

// filesOf are the set's manifest files, in the order they apply.
func filesOf(set Set) ([]string, error) {
	names, ok := files[set]
	if !ok {
		return nil, fmt.Errorf("no agent set %q", set)
	}
	return names, nil
}

// Layer is the set's layer as Flux applies it into a cluster of its kind
// (examples/clusters/..., which `make generate` writes with it): operators
// first, the files the platform's operators bring (their CRDs and
// namespaces, by file name), then the set's manifests as cluster/agents has
// them, and a kustomization.yaml that lists them all. The images stay the
// manifests' own; each pool's Kustomization overrides them (Overrides).
func Layer(set Set, operators map[string][]byte) (map[string][]byte, error) {
	names, err := filesOf(set)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	k := "# Generated by `make generate` (tools/cmd/layers) from cluster/crds and\n" +
		"# cluster/agents: the " + string(set) + " clusters' layer, which each such cluster's\n" +
		"# Flux Kustomization applies into it. Edit those, not this directory.\n" +
		"apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n"
	for _, f := range slices.Sorted(maps.Keys(operators)) {
		if slices.Contains(names, f) {
			return nil, fmt.Errorf("the %s layer's operator file %s has an agent manifest's name", set, f)
		}
		out[f] = operators[f]
		k += "- " + f + "\n"
	}
	for _, f := range names {
		b, err := manifests.ReadFile("manifests/" + f)
		if err != nil {
			return nil, err
		}
		out[f] = b
		k += "- " + f + "\n"
	}
	// Flux prunes what leaves the layer: a CRD or namespace gone from a bad
	// commit (or a wrong path) would take every agent report, every Ceph
	// cluster or every cloud's ControlPlane of the kind with it. They stay
	// until removed by hand.
	k += "patches:\n"
	for _, t := range []struct{ apiVersion, kind string }{{"apiextensions.k8s.io/v1", "CustomResourceDefinition"}, {"v1", "Namespace"}} {
		k += "- target: {kind: " + t.kind + "}\n  patch: |\n    apiVersion: " + t.apiVersion + "\n    kind: " + t.kind +
			"\n    metadata:\n      name: any\n      annotations:\n        kustomize.toolkit.fluxcd.io/prune: disabled\n"
	}
	out["kustomization.yaml"] = []byte(k)
	return out, nil
}

// An Image is one image override of a Flux Kustomization (spec.images):
// containers whose image is Name run NewName:NewTag instead.
type Image struct {
	Name    string `json:"name"`
	NewName string `json:"newName"`
	NewTag  string `json:"newTag"`
}

// Overrides are the image overrides that run the set's layer with images:
// one per agent image of its manifests, in their order.
func Overrides(set Set, images Images) ([]Image, error) {
	objs, err := load(set)
	if err != nil {
		return nil, err
	}
	var out []Image
	seen := map[string]bool{}
	for _, o := range objs {
		for _, c := range containers(o.Object) {
			img, _ := c["image"].(string)
			name := img
			if i := strings.LastIndex(img, ":"); i > strings.LastIndex(img, "/") {
				name = img[:i]
			}
			if img == "" || seen[name] {
				continue
			}
			seen[name] = true
			ref := images.ref(img)
			i := strings.LastIndex(ref, ":")
			out = append(out, Image{Name: name, NewName: ref[:i], NewTag: ref[i+1:]})
		}
	}
	return out, nil
}
