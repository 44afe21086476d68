// Package agentbundle is the node agents' companion package as the pool
// functions carry it: the manifests of cluster/agents and the agents' CRDs
// (cluster/crds/agents), copied here by `make generate` and embedded, so a
// function version always places the agents of its own release into its
// pools' clusters.
package agentbundle

import (
	"embed"
	"errors"
	"fmt"
	"io"
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
)

var files = map[Set][]string{
	Hypervisor: {"namespace.yaml", "ovs.c5c3.io_ovsnodes.yaml", "node-restriction.yaml", "hypervisor-agent.yaml", "ha-agent.yaml", "ovs-agent.yaml"},
	Storage:    {"storage.c5c3.io_cephstatuses.yaml", "storage-agent.yaml"},
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
	names, ok := files[set]
	if !ok {
		return nil, fmt.Errorf("no agent set %q", set)
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
			relocate(obj, images)
			out = append(out, Manifest{Name: strings.ToLower(kind + "-" + strings.NewReplacer(":", "-", ".", "-").Replace(name)), Object: obj})
		}
		_ = r.Close()
	}
	return out, nil
}

// relocate points the images of a workload's containers at images.
func relocate(obj map[string]any, images Images) {
	spec, _ := obj["spec"].(map[string]any)
	tmpl, _ := spec["template"].(map[string]any)
	pod, _ := tmpl["spec"].(map[string]any)
	for _, key := range []string{"initContainers", "containers"} {
		cs, _ := pod[key].([]any)
		for _, c := range cs {
			if c, ok := c.(map[string]any); ok {
				if img, ok := c["image"].(string); ok && img != "" {
					c["image"] = images.ref(img)
				}
			}
		}
	}
}
